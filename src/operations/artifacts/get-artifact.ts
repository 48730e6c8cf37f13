import { z } from 'zod';
import type { ActorKind } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import { type ArtifactRow, databaseArtifactStore, findArtifact } from '../../store/artifacts.ts';
import { actorRef } from '../tasks/task-schema.ts';
import { defineOperation } from '../define-operation.ts';
import { artifactId, artifactRef, toArtifactRef } from './artifact-schema.ts';

export const artifactOutput = artifactRef.extend({
  name: z.string().nullable(),
  task_id: z.string().nullable(),
  created_at: z.iso.datetime(),
  created_by: actorRef,
  content: z.string().optional().describe('The body, only when asked for with `content=utf8|base64`.'),
  encoding: z.enum(['utf8', 'base64']).optional(),
});

export function toArtifact(row: ArtifactRow): z.infer<typeof artifactOutput> {
  return {
    ...toArtifactRef({ id: row.id, size: row.size_bytes, content_type: row.content_type, sha256: row.sha256 }),
    name: row.name,
    task_id: row.task_id,
    created_at: row.created_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export const getArtifact = defineOperation({
  name: 'artifacts_get',
  summary: "Read an artifact's reference and facts, and its body when asked for.",
  description: 'Over REST the raw bytes are at `href`, the sha256 as ETag.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/artifacts/{id}' },
  input: z.strictObject({
    id: artifactId,
    content: z.enum(['none', 'utf8', 'base64']).default('none').describe('Include the body: as text (`utf8`, refused for bytes that are not UTF-8) or `base64`.'),
  }),
  output: artifactOutput,
  async run(db, _ctx, input) {
    const row = await findArtifact(db, input.id);
    if (!row) throw new BatonError('not_found', `Artifact ${input.id} does not exist.`);
    const artifact = toArtifact(row);
    if (input.content === 'none') return artifact;
    const bytes = await databaseArtifactStore.read(db, row.id);
    if (!bytes) throw new BatonError('not_found', `Artifact ${input.id} has no stored content.`);
    if (input.content === 'base64') return { ...artifact, content: Buffer.from(bytes).toString('base64'), encoding: 'base64' as const };
    try {
      return { ...artifact, content: strictUtf8.decode(bytes), encoding: 'utf8' as const };
    } catch {
      throw new BatonError('invalid_parameter', `Artifact ${input.id} (${row.content_type}) is not UTF-8 text.`, {
        hint: 'Ask for content=base64, or GET its href for the raw bytes.',
        extra: { errors: [{ pointer: '/content', detail: 'the bytes are not UTF-8; use base64', location: 'query' }] },
      });
    }
  },
});
