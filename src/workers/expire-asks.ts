import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { SYSTEM_ACTOR } from '../domain/scopes.ts';
import type { Ids } from '../ids.ts';
import { closeAsk, escalate } from '../operations/asks/ask-flow.ts';
import { type AskRow, dueAsks, lockAskTask, workspacesWithAsksDue } from '../store/asks.ts';
import { appendEvents } from '../store/events.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace } from '../store/workspace-scope.ts';

const BATCH = 100;

/**
 * One pass, in each workspace with an ask due: each open ask past its deadline goes to the next principal of its chain, or, after the
 * last, closes with its default answer (`ask.escalated` / `ask.defaulted`, by the system actor).
 * Exactly once across instances: each ask is handled in its own transaction that locks its task and
 * then the ask, and re-reads it there; an instance that finds it already moved on skips it.
 */
export async function expireAsks(db: Kysely<DB>, deps: { clock: Clock; ids: Ids }): Promise<{ escalated: number; defaulted: number }> {
  const report = { escalated: 0, defaulted: 0 };
  for (const workspace of await workspacesWithAsksDue(db, deps.clock.now())) {
    const done = await expireAsksIn(db, workspace, deps);
    report.escalated += done.escalated;
    report.defaulted += done.defaulted;
  }
  return report;
}

async function expireAsksIn(db: Kysely<DB>, workspace: string, deps: { clock: Clock; ids: Ids }): Promise<{ escalated: number; defaulted: number }> {
  let escalated = 0;
  let defaulted = 0;
  const due = await inWorkspace(db, workspace, (tx) => dueAsks(tx, deps.clock.now(), BATCH));
  for (const { id, task_id } of due) {
    const done = await inWorkspace(db, workspace, async (tx) => {
      await lockAskTask(tx, task_id);
      const now = deps.clock.now();
      const row: AskRow | undefined = await tx.selectFrom('asks').selectAll().where('id', '=', id).where('status', '=', 'open').where('due_at', '<=', now).forUpdate().executeTakeFirst();
      if (!row) return undefined;
      const by = { id: SYSTEM_ACTOR.id, kind: 'system' as const, now, ids: deps.ids };
      const last = row.step + 1 >= row.chain.length;
      const { event } = last ? await closeAsk(tx, row, { status: 'defaulted', answer: row.default_answer }, by) : await escalate(tx, row, by);
      await appendEvents(tx, [
        { id: deps.ids.make('evt'), type: event.type, subject: event.subject, actor_id: SYSTEM_ACTOR.id, actor_kind: SYSTEM_ACTOR.kind, token_id: null, machine: null, idempotency_key: null, data: event.data, created_at: now },
      ]);
      return last ? 'defaulted' : 'escalated';
    });
    if (done === 'defaulted') defaulted++;
    if (done === 'escalated') escalated++;
  }
  return { escalated, defaulted };
}
