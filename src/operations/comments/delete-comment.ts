import { z } from 'zod';
import { updateComment } from '../../store/comments.ts';
import { defineOperation } from '../define-operation.ts';
import { lockOwnComment } from './comment-access.ts';
import { commentId, commentOutput, toComment } from './comment-schema.ts';

export const deleteComment = defineOperation({
  name: 'comments_delete',
  summary: 'Delete your own comment (a human with agents:admin may delete any); a tombstone keeps its place.',
  description: 'The tombstone has `body` null and `deleted_at` set; the timeline keeps the text (`comment.created`) and adds `comment.deleted`.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  http: { method: 'DELETE', path: '/comments/{id}' },
  input: z.strictObject({ id: commentId }),
  output: commentOutput,
  version: (comment) => comment.version,
  async run(tx, ctx, input) {
    const moderator = ctx.actor.kind === 'human' && ctx.actor.scopes.has('agents:admin');
    const { comment } = await lockOwnComment(tx, input.id, ctx, moderator);
    const row = await updateComment(tx, comment.id, { body: '', updated_at: ctx.now, deleted_at: ctx.now, deleted_by_id: ctx.actor.id });
    ctx.emit({ type: 'comment.deleted', subject: row.task_id, data: { comment_id: row.id, author: { id: comment.author_id, kind: comment.author_kind } } });
    return toComment(row);
  },
});
