import { z } from 'zod';
import { defineOperation } from '../define-operation.ts';
import { taskId } from '../tasks/task-schema.ts';
import { lockLiveTask, postComment } from './comment-access.ts';
import { commentArtifacts, commentBody, commentOutput, toComment } from './comment-schema.ts';

export const createComment = defineOperation({
  name: 'comments_create',
  summary: 'Comment on a task (Markdown); `@name` mentions notify that principal.',
  description:
    'Each one mentioned gets a `comment.mentioned` event. A mention of no principal is 422 unknown_principal; a deleted task, 410 task_deleted.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/tasks/{id}/comments', successStatus: 201 },
  input: z.strictObject({ id: taskId, body: commentBody, artifacts: commentArtifacts.default([]) }),
  output: commentOutput,
  async run(tx, ctx, input) {
    const task = await lockLiveTask(tx, input.id);
    return toComment(await postComment(tx, ctx, task, { body: input.body, artifacts: input.artifacts, pointer: '/body' }));
  },
});
