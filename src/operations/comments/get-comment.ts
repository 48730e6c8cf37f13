import { z } from 'zod';
import { findComment } from '../../store/comments.ts';
import { defineOperation } from '../define-operation.ts';
import { commentNotFound } from './comment-access.ts';
import { commentId, commentOutput, toComment } from './comment-schema.ts';

export const getComment = defineOperation({
  name: 'comments_get',
  summary: 'Read one comment in full (a deleted one as its tombstone).',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/comments/{id}' },
  input: z.strictObject({ id: commentId }),
  output: commentOutput,
  version: (comment) => comment.version,
  async run(db, _ctx, input) {
    const row = await findComment(db, input.id);
    if (!row) throw commentNotFound(input.id);
    return toComment(row);
  },
});
