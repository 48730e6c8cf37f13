import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { SYSTEM_ACTOR } from '../domain/scopes.ts';
import type { Ids } from '../ids.ts';
import { appendEvents } from '../store/events.ts';
import type { DB } from '../store/schema.ts';
import { markOverdue, workspacesWithOverdue } from '../store/task-tree.ts';
import { inWorkspace } from '../store/workspace-scope.ts';

const BATCH = 100;

/**
 * One pass, in each workspace with a task due in turn: each open task past its due date gets one `task.overdue` event by the system actor,
 * marked and written in one transaction per batch. Safe on any number of instances at once: the
 * instance that marks a task writes its event; the others skip the locked or marked row.
 */
export async function flagOverdue(db: Kysely<DB>, deps: { clock: Clock; ids: Ids }): Promise<{ overdue: number }> {
  let overdue = 0;
  for (const workspace of await workspacesWithOverdue(db, deps.clock.now())) overdue += await flagOverdueIn(db, workspace, deps);
  return { overdue };
}

async function flagOverdueIn(db: Kysely<DB>, workspace: string, deps: { clock: Clock; ids: Ids }): Promise<number> {
  let overdue = 0;
  for (;;) {
    const marked = await inWorkspace(db, workspace, async (tx) => {
      const now = deps.clock.now();
      const due = await markOverdue(tx, now, BATCH);
      await appendEvents(
        tx,
        due.map((task) => ({
          id: deps.ids.make('evt'),
          type: 'task.overdue' as const,
          subject: task.id,
          actor_id: SYSTEM_ACTOR.id,
          actor_kind: SYSTEM_ACTOR.kind,
          token_id: null,
          machine: null,
          idempotency_key: null,
          data: { due_at: task.due_at.toISOString() },
          created_at: now,
        })),
      );
      return due.length;
    });
    overdue += marked;
    if (marked < BATCH) return overdue;
  }
}
