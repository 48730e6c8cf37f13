import type { Kysely } from 'kysely';
import { BatonError } from '../../errors.ts';
import { existingArtifactIds } from '../../store/artifacts.ts';
import { type CommentRow, findComment, humanCommenters, insertComment, lockComment } from '../../store/comments.ts';
import type { Tx } from '../../store/connection.ts';
import type { DB } from '../../store/schema.ts';
import { lockTask, type TaskRow, tasksEverExisted } from '../../store/tasks.ts';
import type { OperationContext } from '../define-operation.ts';
import { mentionsIn, type PrincipalRef, resolveMentions } from '../shared/principals.ts';
import { assertVersion } from '../shared/versions.ts';
import { insertInboxItems } from '../../store/inbox.ts';
import { inboxItem } from '../asks/ask-flow.ts';
import { MENTIONS_MAX } from './comment-schema.ts';
import { taskNotFound } from '../tasks/get-task.ts';

export function commentNotFound(id: string): BatonError {
  return new BatonError('not_found', `No comment ${id}.`, { hint: "[[comments_list]] lists a task's comments." });
}

export function taskDeleted(id: string): BatonError {
  return new BatonError('task_deleted', `Task ${id} was deleted; nothing new can be added to it.`, { extra: { task_id: id } });
}

/** Locks a live task to add to its thread: a deleted one is `task_deleted` (410), one never made 404. */
export async function lockLiveTask(tx: Tx, id: string): Promise<TaskRow> {
  const task = await lockTask(tx, id);
  if (task) return task;
  throw (await tasksEverExisted(tx, [id])).has(id) ? taskDeleted(id) : taskNotFound(id);
}

/** Refuses artifact references that name no stored artifact, pointing at each. */
export async function checkArtifacts(db: Kysely<DB>, ids: readonly string[], pointer: string): Promise<void> {
  const known = await existingArtifactIds(db, ids);
  const bad = ids.filter((id) => !known.has(id));
  if (bad.length === 0) return;
  throw new BatonError('validation_failed', `${pointer.slice(1)} names ${bad.join(', ')}, which ${bad.length === 1 ? 'is' : 'are'} not a stored artifact.`, {
    extra: { errors: bad.map((id) => ({ pointer: `${pointer}/${ids.indexOf(id)}`, detail: 'no such artifact', location: 'body' })) },
  });
}

/** A `comment.mentioned` event for each principal, with the principal as subject so a webhook or stream can route on it. */
export function emitMentions(ctx: OperationContext, mentioned: readonly PrincipalRef[], comment: { id: string; task_id: string; body: string }): void {
  for (const principal of mentioned) {
    ctx.emit({
      type: 'comment.mentioned',
      subject: principal.id,
      data: { task_id: comment.task_id, comment_id: comment.id, principal_kind: principal.kind, excerpt: comment.body.slice(0, 200) },
    });
  }
}

/** The principals a body mentions, resolved; more than MENTIONS_MAX is a validation error. */
export async function mentionedIn(db: Kysely<DB>, body: string, pointer = '/body'): Promise<PrincipalRef[]> {
  const mentions = mentionsIn(body);
  if (mentions.length > MENTIONS_MAX) {
    throw new BatonError('validation_failed', `${pointer.slice(1)} mentions ${mentions.length} principals; at most ${MENTIONS_MAX} per comment.`, {
      extra: { errors: [{ pointer, detail: `at most ${MENTIONS_MAX} mentions`, location: 'body' }] },
    });
  }
  return resolveMentions(db, mentions, pointer);
}

/**
 * Locks a comment for its author to change (task first, then the comment: the lock order every
 * thread write follows). Refuses a comment on a deleted task, a deleted comment, and, unless
 * `mayModerate`, anyone but the author.
 */
export async function lockOwnComment(tx: Tx, id: string, ctx: OperationContext, mayModerate: boolean): Promise<{ task: TaskRow; comment: CommentRow }> {
  const found = await findComment(tx, id);
  if (!found) throw commentNotFound(id);
  const task = await lockLiveTask(tx, found.task_id);
  const comment = await lockComment(tx, id);
  if (!comment) throw commentNotFound(id);
  if (comment.author_id !== ctx.actor.id && !mayModerate) {
    throw new BatonError('not_comment_author', `Comment ${id} is by ${comment.author_kind} ${comment.author_id}, not you.`, {
      extra: { author: { id: comment.author_id, kind: comment.author_kind } },
    });
  }
  if (comment.deleted_at) {
    throw new BatonError('comment_deleted', `Comment ${id} was deleted at ${comment.deleted_at.toISOString()}.`, { extra: { comment_id: id } });
  }
  assertVersion(`Comment ${id}`, comment.version, ctx.expectedVersion);
  return { task, comment };
}

/** Adds a comment to a locked live task's thread, with its `comment.created` and mention events and the inbox items of whom it mentions or answers (`reply`: a human who wrote in the thread before). */
export async function postComment(tx: Tx, ctx: OperationContext, task: TaskRow, comment: { body: string; artifacts: readonly string[]; pointer: string }): Promise<CommentRow> {
  const mentioned = await mentionedIn(tx, comment.body, comment.pointer);
  await checkArtifacts(tx, comment.artifacts, '/artifacts');
  // Read before the insert: the humans who wrote in this thread before, whom it answers (a mention is their item instead).
  const repliedTo = await humanCommenters(tx, task.id, [ctx.actor.id, ...mentioned.map((p) => p.id)]);
  const row = await insertComment(tx, {
    id: ctx.ids.make('cmt'),
    task_id: task.id,
    body: comment.body,
    artifacts: [...comment.artifacts],
    mentions: mentioned.map((p) => p.id),
    author_id: ctx.actor.id,
    author_kind: ctx.actor.kind,
    created_at: ctx.now,
  });
  ctx.emit({ type: 'comment.created', subject: task.id, data: { comment_id: row.id, body: row.body, artifacts: row.artifacts, mentions: row.mentions } });
  emitMentions(ctx, mentioned, row);
  // A principal's own comment does not wake it (the loop guard of issue 40 §3).
  const others = mentioned.filter((p) => p.id !== ctx.actor.id);
  const item = (principal: string, kind: 'mention' | 'reply') => inboxItem(ctx.ids, ctx.now, { principal_id: principal, kind, task_id: task.id, ref_id: row.id, by_id: ctx.actor.id, excerpt: row.body.slice(0, 200) });
  await insertInboxItems(tx, [...others.map((p) => item(p.id, 'mention')), ...repliedTo.map((id) => item(id, 'reply'))]);
  return row;
}
