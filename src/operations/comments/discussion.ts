import type { Kysely } from 'kysely';
import { z } from 'zod';
import { settledAsks } from '../../store/asks.ts';
import { findComments, latestHumanComments } from '../../store/comments.ts';
import type { DB } from '../../store/schema.ts';
import type { TaskRow } from '../../store/tasks.ts';
import { commentOutput, COMMENT_MAX, toComment } from './comment-schema.ts';

/** How many of the latest human comments a claim or resume answer carries. */
export const DISCUSSION_COMMENTS = 5;
/** How many of the latest answered asks it carries. */
export const DISCUSSION_ASKS = 3;
/** Each of those is cut to this many characters (`truncated: true`); the change request is whole. */
export const DISCUSSION_EXCERPT_CHARS = 500;

export const discussionOutput = z
  .object({
    changes_requested: commentOutput
      .nullable()
      .describe('The reviewer\'s change request you have not yet answered with a hand-in: read it first. Whole (up to 4,000 characters).'),
    human_comments: z
      .array(commentOutput)
      .max(DISCUSSION_COMMENTS)
      .describe(`The latest ${DISCUSSION_COMMENTS} comments by humans, newest first, each cut to ${DISCUSSION_EXCERPT_CHARS} characters.`),
    answered_asks: z
      .array(z.object({ id: z.string(), question: z.string(), answer: z.string(), option: z.string().optional(), by: z.string(), defaulted: z.boolean() }))
      .max(DISCUSSION_ASKS)
      .optional()
      .describe('The latest answers to asks on the task (the default, once applied), newest first; absent when none.'),
  })
  .describe(
    `What humans said about the task, bounded: at most ${DISCUSSION_COMMENTS} + 1 comments and ${COMMENT_MAX + DISCUSSION_COMMENTS * DISCUSSION_EXCERPT_CHARS} characters of text. The whole thread: GET /api/v1/tasks/{id}/comments.`,
  );
export type Discussion = z.infer<typeof discussionOutput>;

/** Each task's discussion, in two queries however many tasks; keyed by task id. */
export async function discussions(db: Kysely<DB>, tasks: readonly TaskRow[]): Promise<Map<string, Discussion>> {
  const requestIds = tasks.map((t) => t.changes_requested_id).filter((id): id is string => id !== null);
  const latest = await latestHumanComments(db, tasks.map((t) => t.id), DISCUSSION_COMMENTS + 1);
  const requests = await findComments(db, requestIds);
  const requestById = new Map(requests.map((r) => [r.id, r]));
  const answered = await settledAsks(db, tasks.map((t) => t.id), DISCUSSION_ASKS);
  return new Map(
    tasks.map((task) => {
      const request = task.changes_requested_id ? requestById.get(task.changes_requested_id) : undefined;
      const live = request && !request.deleted_at ? request : undefined;
      const others = (latest.get(task.id) ?? []).filter((c) => c.id !== live?.id).slice(0, DISCUSSION_COMMENTS);
      const asks = (answered.get(task.id) ?? []).map((a) => ({
        id: a.id,
        question: a.question.slice(0, DISCUSSION_EXCERPT_CHARS),
        answer: (a.answer?.text ?? '').slice(0, DISCUSSION_EXCERPT_CHARS),
        ...(a.answer?.option === undefined ? {} : { option: a.answer.option }),
        by: a.answered_by_id ?? '',
        defaulted: a.status === 'defaulted',
      }));
      const discussion: Discussion = { changes_requested: live ? toComment(live) : null, human_comments: others.map((c) => toComment(c, DISCUSSION_EXCERPT_CHARS)) };
      if (asks.length > 0) discussion.answered_asks = asks;
      return [task.id, discussion];
    }),
  );
}
