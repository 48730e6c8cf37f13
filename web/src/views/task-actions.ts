import type { WriteRequest } from '../action.ts';

/*
 * The task page's writes, one per action, built in one place for its panels and the command
 * palette alike (each sent by `useAction`, which chooses the Idempotency-Key).
 */

/** `tasks_assign`: to a principal, or to nobody (`null`); `releaseLease` ends a holder's lease to do it. */
export const assignRequest = (taskId: string, assignee: string | null, releaseLease = false): WriteRequest<'tasks_assign'> => ({
  operation: 'tasks_assign',
  input: { id: taskId, assignee, ...(releaseLease ? { release_lease: true } : {}) },
});

/** `tasks_review`: approve, or request changes (the comment is required for changes). */
export const reviewRequest = (taskId: string, decision: 'approve' | 'request_changes', comment: string): WriteRequest<'tasks_review'> => ({
  operation: 'tasks_review',
  input: { id: taskId, decision, ...(comment.trim() ? { comment } : {}) },
});

/** `tasks_requeue`: a dead letter back in the queue with its attempts reset. */
export const requeueRequest = (taskId: string): WriteRequest<'tasks_requeue'> => ({ operation: 'tasks_requeue', input: { id: taskId } });

/** `comments_create`: a comment (Markdown; `@name` mentions). */
export const commentRequest = (taskId: string, body: string): WriteRequest<'comments_create'> => ({ operation: 'comments_create', input: { id: taskId, body } });

/** `tasks_update` with `archived`: archive a done or cancelled task (off the board and lists), or unarchive it. */
export const archiveRequest = (taskId: string, archived: boolean): WriteRequest<'tasks_update'> => ({ operation: 'tasks_update', input: { id: taskId, archived } });
