import { type Kysely, sql } from 'kysely';
import { FINISHED_STATUSES } from '../domain/task-status.ts';
import { type EventRow, settledEvents } from './events.ts';
import type { DB } from './schema.ts';

/**
 * The events in (afterSeq, upToSeq] that are for `principalId`: an ask to it (or, by another, to the
 * role the person holds now), an answer to its ask,
 * a mention of it by another, a review decision on its hand-in, a task assigned to it by another.
 * In commit order, at most `limit`. Scans the timeline from `afterSeq` (the seq index), so a wait
 * that keeps its cursor reads only what is new.
 */
export async function eventsFor(db: Kysely<DB>, principalId: string, afterSeq: string, upToSeq: string, limit: number): Promise<EventRow[]> {
  const me = principalId;
  return settledEvents(db)
    .where('seq', '>', afterSeq)
    .where('seq', '<=', upToSeq)
    .where((eb) =>
      eb.or([
        eb.and([
          eb('type', 'in', ['ask.created', 'ask.escalated']),
          sql<boolean>`(data->>'to' = ${me} OR (actor_id <> ${me} AND data->>'to' = (SELECT 'role:' || role FROM agents WHERE id = ${me} AND NOT disabled)))`,
        ]),
        eb.and([eb('type', 'in', ['ask.answered', 'ask.defaulted']), sql<boolean>`data->>'asked_by' = ${me}`, eb('actor_id', '<>', me)]),
        eb.and([eb('type', '=', 'comment.mentioned'), eb('subject', '=', me), eb('actor_id', '<>', me)]),
        eb.and([eb('type', '=', 'task.changes_requested'), sql<boolean>`data->'to'->>'id' = ${me}`, eb('actor_id', '<>', me)]),
        eb.and([eb('type', '=', 'task.status_changed'), sql<boolean>`data->>'handed_in_by' = ${me}`, eb('actor_id', '<>', me)]),
        eb.and([eb('type', '=', 'task.assigned'), sql<boolean>`data->'to'->>'id' = ${me}`, eb('actor_id', '<>', me)]),
      ]),
    )
    .orderBy('events.seq', 'asc')
    .limit(limit)
    .execute();
}

/** The role `principalId` holds now (humans only), or null (an agent, or disabled): the role `eventsFor` reads. */
export async function roleOf(db: Kysely<DB>, principalId: string): Promise<string | null> {
  const row = await db.selectFrom('agents').select('role').where('id', '=', principalId).where('disabled', '=', false).executeTakeFirst();
  return row?.role ?? null;
}

/**
 * The open tasks (not done, cancelled or deleted) `principalId` holds a live lease on or is assigned
 * to now, and which of the two.
 */
export async function tasksOf(db: Kysely<DB>, principalId: string): Promise<{ id: string; holds: boolean; assigned: boolean }[]> {
  const me = principalId;
  return db
    .selectFrom('tasks')
    .select('id')
    .select(sql<boolean>`(lease_id IS NOT NULL AND lease_holder_id = ${me})`.as('holds'))
    .select(sql<boolean>`(assignee_id IS NOT DISTINCT FROM ${me})`.as('assigned'))
    .where('status', 'not in', FINISHED_STATUSES)
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('assignee_id', '=', me), eb('id', 'in', eb.selectFrom('leases').select('task_id').where('holder_id', '=', me).where('state', '=', 'active'))]))
    .execute();
}
