import type { TaskStatus } from '../../domain/task-status.ts';
import { BatonError } from '../../errors.ts';
import type { Tx } from '../../store/connection.ts';
import { ancestorIds, childCount, lockOpenDescendants, lockTaskTree, subtreeHeight } from '../../store/task-tree.ts';
import { existingTaskIds, type TaskRow, updateTask } from '../../store/tasks.ts';
import { closeAsksOfEndedTask } from '../asks/ask-flow.ts';
import type { OperationContext } from '../define-operation.ts';
import { SUBTASKS_MAX, TREE_DEPTH_MAX } from './task-schema.ts';

/**
 * Checks that `parentId` may become the parent of task `id` (undefined for a task being created):
 * an existing task, not the task itself, not one of its descendants, with fewer than SUBTASKS_MAX
 * subtasks, and the tree no deeper than TREE_DEPTH_MAX. Holds the tree lock to the end of the
 * transaction, so concurrent moves cannot make a cycle or pass a bound between them (an update
 * takes it before locking its task, to keep one lock order).
 */
export async function checkParent(tx: Tx, id: string | undefined, parentId: string): Promise<void> {
  if (id === parentId) throw new BatonError('parent_self', `Task ${id} cannot be its own parent.`, { extra: { errors: [{ pointer: '/parent_id', detail: 'a task cannot be its own parent', location: 'body' }] } });
  await lockTaskTree(tx);
  if (!(await existingTaskIds(tx, [parentId])).has(parentId)) {
    throw new BatonError('validation_failed', `parent_id names ${parentId}, which is not an existing task.`, {
      extra: { errors: [{ pointer: '/parent_id', detail: 'no such task', location: 'body' }] },
    });
  }
  const ancestors = await ancestorIds(tx, parentId);
  if (id !== undefined && ancestors.includes(id)) {
    const chain = ancestors.slice(0, ancestors.indexOf(id) + 1);
    throw new BatonError('parent_cycle', `Task ${parentId} is a descendant of ${id}: making it ${id}'s parent would make a cycle.`, {
      extra: { ancestors: chain, cycle: [id, ...chain], errors: [{ pointer: '/parent_id', detail: 'a descendant of this task', location: 'body' }] },
    });
  }
  const children = await childCount(tx, parentId);
  if (children >= SUBTASKS_MAX) {
    throw new BatonError('too_many_subtasks', `Task ${parentId} has ${children} subtasks already; the limit is ${SUBTASKS_MAX}.`, {
      extra: { limit: SUBTASKS_MAX, found: children + 1, errors: [{ pointer: '/parent_id', detail: `at most ${SUBTASKS_MAX} subtasks per task`, location: 'body' }] },
    });
  }
  const height = id === undefined ? 0 : await subtreeHeight(tx, id);
  const depth = ancestors.length + 1 + height;
  if (depth > TREE_DEPTH_MAX) {
    throw new BatonError('parent_too_deep', `Under ${parentId} the tree would be ${depth} levels deep; the limit is ${TREE_DEPTH_MAX}.`, {
      extra: { limit: TREE_DEPTH_MAX, found: depth, errors: [{ pointer: '/parent_id', detail: `at most ${TREE_DEPTH_MAX} levels`, location: 'body' }] },
    });
  }
}

/**
 * Before a task moves to done: its open subtasks (any depth) are refused with `children_open`,
 * or, with `cancelChildren`, cancelled in the same transaction (each lease ended, each open ask closed, each with its events).
 */
export async function closeChildren(tx: Tx, ctx: OperationContext, row: TaskRow, cancelChildren: boolean): Promise<void> {
  const open = await lockOpenDescendants(tx, row.id);
  if (open.length === 0) return;
  if (!cancelChildren) {
    throw new BatonError('children_open', `Task ${row.id} has ${open.length} open subtask${open.length === 1 ? '' : 's'}: ${open.slice(0, 20).map((c) => `${c.id} (${c.status})`).join(', ')}.`, {
      extra: { open_children: open.slice(0, 100).map((c) => ({ id: c.id, status: c.status, parent_id: c.parent_id })) },
    });
  }
  for (const child of open) {
    const from = child.status as TaskStatus;
    const ending = child.status === 'in_progress' && child.lease_id ? { id: child.lease_id, state: 'ended' as const, failure_code: 'cancelled' } : undefined;
    await closeAsksOfEndedTask(tx, ctx, child, 'task_cancelled');
    if (ending) ctx.emit({ type: 'lease.released', subject: child.id, data: { lease_id: ending.id, reason: 'status_changed', to: 'cancelled' } });
    await updateTask(
      tx,
      child.id,
      {
        status: 'cancelled',
        ...(ending ? { lease_id: null, lease_holder_id: null, lease_holder_kind: null, lease_expires_at: null } : {}),
        ...(child.blocked_reason ? { blocked_reason: null } : {}),
        updated_at: ctx.now,
        updated_by_id: ctx.actor.id,
        updated_by_kind: ctx.actor.kind,
      },
      ending,
    );
    ctx.emit({ type: 'task.status_changed', subject: child.id, data: { from, to: 'cancelled', reason: 'parent_done', parent_id: row.id } });
  }
}
