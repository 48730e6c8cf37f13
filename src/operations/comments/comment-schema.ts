import { z } from 'zod';
import { PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import { idPattern } from '../../ids.ts';
import type { CommentRow } from '../../store/comments.ts';
import { artifactId } from '../artifacts/artifact-schema.ts';

/** A comment's body budget: the same as a task description's. */
export const COMMENT_MAX = 4000;
export const COMMENT_ARTIFACTS_MAX = 10;
/** Mentions per comment: more is a broadcast, not a mention. */
export const MENTIONS_MAX = 10;

export const commentId = z.string().regex(new RegExp(idPattern('cmt')), 'must be a comment id: cmt_ followed by a 26-character ULID');
export const commentBody = z
  .string()
  .trim()
  .min(1, 'body must not be empty')
  .max(COMMENT_MAX, `body is limited to ${COMMENT_MAX} characters; put longer text in an artifact (artifacts_create, POST /api/v1/artifacts) and list its id in artifacts`)
  .describe(`Markdown, 1–${COMMENT_MAX} characters. \`@name\` or \`@agt_…\` mentions a principal.`);
export const commentArtifacts = z
  .array(artifactId)
  .max(COMMENT_ARTIFACTS_MAX, `at most ${COMMENT_ARTIFACTS_MAX} artifacts`)
  .refine((ids) => new Set(ids).size === ids.length, 'artifacts must not repeat')
  .describe('Artifacts the comment refers to, by id (artifacts_create first).');

export const commentOutput = z.object({
  id: z.string(),
  task_id: z.string(),
  body: z.string().nullable().describe('Markdown; null on a deleted comment (a tombstone).'),
  truncated: z.boolean().optional().describe('Set when `body` was cut to fit a claim or resume answer; read the whole comment with GET /api/v1/comments/{id}.'),
  artifacts: z.array(z.string()).max(COMMENT_ARTIFACTS_MAX),
  mentions: z.array(z.string()).max(MENTIONS_MAX).describe('The principals the body mentions, by id.'),
  author: z.object({ id: z.string(), kind: z.enum(PRINCIPAL_KINDS) }),
  version: z.int(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  deleted_at: z.iso.datetime().nullable(),
});
export type Comment = z.infer<typeof commentOutput>;

export function toComment(row: CommentRow, maxChars?: number): Comment {
  const cut = maxChars !== undefined && row.body.length > maxChars;
  return {
    id: row.id,
    task_id: row.task_id,
    body: row.deleted_at ? null : cut ? row.body.slice(0, maxChars) : row.body,
    ...(cut ? { truncated: true } : {}),
    artifacts: row.artifacts,
    mentions: row.mentions,
    author: { id: row.author_id, kind: row.author_kind },
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    deleted_at: row.deleted_at?.toISOString() ?? null,
  };
}
