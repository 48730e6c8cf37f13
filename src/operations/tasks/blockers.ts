import { findCycle } from '../../domain/task-graph.ts';
import { BatonError } from '../../errors.ts';
import { dependentsHeight, lockBlockerGraph, upstreamBlockers } from '../../store/blockers.ts';
import type { Tx } from '../../store/connection.ts';
import { existingTaskIds } from '../../store/tasks.ts';
import { BLOCKER_CHAIN_MAX } from './task-schema.ts';

/**
 * Checks a task's new `blocked_by` (`task` undefined for a task being created): every entry another
 * existing task, no cycle closed, and no chain of blockers through the task longer than
 * BLOCKER_CHAIN_MAX. When it adds an edge it holds the blocker-graph lock to the end of the
 * transaction, so concurrent writes cannot close a cycle or pass the bound between them (an update
 * takes the lock before locking its task, to keep one lock order).
 */
export async function checkBlockers(tx: Tx, task: { id: string; blocked_by: readonly string[] } | undefined, ids: readonly string[]): Promise<void> {
  const existing = await existingTaskIds(tx, ids);
  const bad = ids.filter((b) => b === task?.id || !existing.has(b));
  if (bad.length > 0) {
    throw new BatonError('validation_failed', `blocked_by names ${bad.join(', ')}, which ${bad.length === 1 ? 'is' : 'are'} not another existing task.`, {
      extra: { errors: bad.map((b) => ({ pointer: `/blocked_by/${ids.indexOf(b)}`, detail: b === task?.id ? 'a task cannot block itself' : 'no such task', location: 'body' })) },
    });
  }
  // Dropping edges can neither close a cycle nor lengthen a chain.
  if (!ids.some((b) => !task?.blocked_by.includes(b))) return;
  await lockBlockerGraph(tx);
  const upstream = await upstreamBlockers(tx, ids, task?.id ?? null, BLOCKER_CHAIN_MAX);
  const cycle = task && findCycle(task.id, ids, new Map(upstream.map((u) => [u.id, u.blocked_by])));
  if (task && cycle) {
    throw new BatonError('blocked_by_cycle', `Task ${task.id} cannot wait on ${cycle[1]}: ${cycle.join(' → ')} would be a cycle, each task waiting on the next.`, {
      extra: { cycle, errors: [{ pointer: `/blocked_by/${ids.indexOf(cycle[1] ?? '')}`, detail: 'waits on this task already, directly or through others', location: 'body' }] },
    });
  }
  // The longest chain through the task: its longest chain of blockers, itself, and what waits on it.
  const below = Math.max(0, ...upstream.map((u) => u.depth));
  const above = task ? await dependentsHeight(tx, task.id, BLOCKER_CHAIN_MAX) : 0;
  const found = below + 1 + above;
  if (found > BLOCKER_CHAIN_MAX) {
    throw new BatonError('blocked_by_too_deep', `With these blockers a chain through task ${task?.id ?? '(new)'} would be ${found} tasks long; the limit is ${BLOCKER_CHAIN_MAX}.`, {
      extra: { limit: BLOCKER_CHAIN_MAX, found, errors: [{ pointer: '/blocked_by', detail: `chains of at most ${BLOCKER_CHAIN_MAX} tasks`, location: 'body' }] },
    });
  }
}
