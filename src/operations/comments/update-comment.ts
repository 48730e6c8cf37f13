import { z } from 'zod';
import { updateComment as updateCommentRow } from '../../store/comments.ts';
import { defineOperation } from '../define-operation.ts';
import { checkArtifacts, emitMentions, lockOwnComment, mentionedIn } from './comment-access.ts';
import { commentArtifacts, commentBody, commentId, commentOutput, toComment } from './comment-schema.ts';

export const updateComment = defineOperation({
  name: 'comments_update',
  summary: 'Edit your own comment: its body and/or artifact references.',
  description: 'Only the author may edit. Only principals newly mentioned get a `comment.mentioned` event.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  http: { method: 'PATCH', path: '/comments/{id}' },
  input: z.strictObject({ id: commentId, body: commentBody, artifacts: commentArtifacts.optional() }),
  output: commentOutput,
  version: (comment) => comment.version,
  async run(tx, ctx, input) {
    const { comment } = await lockOwnComment(tx, input.id, ctx, false);
    const mentioned = await mentionedIn(tx, input.body);
    if (input.artifacts) await checkArtifacts(tx, input.artifacts, '/artifacts');
    const artifacts = input.artifacts ?? comment.artifacts;
    if (input.body === comment.body && artifacts.join('\n') === comment.artifacts.join('\n')) return toComment(comment);
    const row = await updateCommentRow(tx, comment.id, { body: input.body, artifacts, mentions: mentioned.map((p) => p.id), updated_at: ctx.now });
    ctx.emit({ type: 'comment.updated', subject: row.task_id, data: { comment_id: row.id, body: row.body, artifacts: row.artifacts, mentions: row.mentions } });
    emitMentions(ctx, mentioned.filter((p) => !comment.mentions.includes(p.id)), row);
    return toComment(row);
  },
});
