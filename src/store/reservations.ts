import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { DB, ReservationRequirement, ReservationsTable } from './schema.ts';
import type { Tx } from './connection.ts';

export type ReservationRow = Selectable<ReservationsTable> & {
  /** The tied task lease's state and expiry (null when not tied to one). */
  lease_state: string | null;
  lease_expires_at: Date | null;
};

/**
 * Serializes, for the rest of the transaction, every acquisition, renewal and release on one key
 * (a resource, or a repository): the overlap check and the insert cannot interleave with another's.
 */
export async function lockReservationKey(tx: Tx, key: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`reservation ${key}`}, 0))`.execute(tx);
}

function withLease(db: Kysely<DB>) {
  return db
    .selectFrom('reservations')
    .leftJoin('leases', 'leases.id', 'reservations.lease_id')
    .selectAll('reservations')
    .select(['leases.state as lease_state', 'leases.expires_at as lease_expires_at']);
}

export async function findReservation(db: Kysely<DB>, id: string): Promise<ReservationRow | undefined> {
  return withLease(db).where('reservations.id', '=', id).executeTakeFirst();
}

/** The reservations of a key not yet marked ended (some may have lapsed), oldest first. */
export async function unendedReservations(tx: Tx, key: string): Promise<ReservationRow[]> {
  return withLease(tx).where('reservations.lock_key', '=', key).where('reservations.ended_at', 'is', null).orderBy('reservations.id').execute();
}

/** The next epoch of a key: one more than any acquisition's so far. */
export async function nextEpoch(tx: Tx, key: string): Promise<number> {
  const row = await tx.selectFrom('reservations').select((eb) => eb.fn.max('epoch').as('epoch')).where('lock_key', '=', key).executeTakeFirst();
  return Number(row?.epoch ?? 0) + 1;
}

export async function insertReservation(tx: Tx, row: Insertable<ReservationsTable>): Promise<void> {
  await tx.insertInto('reservations').values(row).execute();
}

export async function updateReservation(tx: Tx, id: string, changes: Updateable<ReservationsTable>): Promise<void> {
  await tx.updateTable('reservations').set(changes).where('id', '=', id).execute();
}

/** The live lease `holderId` holds on a task at `now`, if any. */
export async function heldLease(tx: Tx, taskId: string, holderId: string, now: Date): Promise<{ id: string } | undefined> {
  return tx.selectFrom('leases').select('id').where('task_id', '=', taskId).where('holder_id', '=', holderId).where('state', '=', 'active').where('expires_at', '>', now).executeTakeFirst();
}

export interface ReservationQuery {
  afterId: string | undefined;
  limit: number;
  /** Only those live at this instant; all when undefined. */
  liveAt: Date | undefined;
  resource: string | undefined;
  repo: string | undefined;
  holderId: string | undefined;
  /** Only those taken for this task (with its lease, or `task_id` on acquire). */
  taskId?: string | undefined;
}

/** One page by id; fetches `limit + 1` for `has_more`. */
export async function listReservations(db: Kysely<DB>, q: ReservationQuery): Promise<ReservationRow[]> {
  let query = withLease(db);
  if (q.afterId) query = query.where('reservations.id', '>', q.afterId);
  if (q.resource !== undefined) query = query.where('reservations.resource', '=', q.resource);
  if (q.repo !== undefined) query = query.where('reservations.repo', '=', q.repo);
  if (q.holderId !== undefined) query = query.where('reservations.holder_id', '=', q.holderId);
  if (q.taskId !== undefined) query = query.where('reservations.task_id', '=', q.taskId);
  const now = q.liveAt;
  if (now) {
    query = query
      .where('reservations.ended_at', 'is', null)
      .where((eb) => eb.or([eb('reservations.expires_at', '>', now), eb('reservations.follows_lease', '=', true)]))
      .where((eb) => eb.or([eb('reservations.lease_id', 'is', null), eb.and([eb('leases.state', '=', 'active'), eb('leases.expires_at', '>', now)])]));
  }
  return query.orderBy('reservations.id').limit(q.limit + 1).execute();
}

/** Records what a new task requires. */
export async function insertTaskRequirements(tx: Tx, taskId: string, requirements: readonly ReservationRequirement[]): Promise<void> {
  await tx.insertInto('task_reservations').values({ task_id: taskId, requirements: JSON.stringify(requirements) as unknown as ReservationRequirement[] }).execute();
}

/** Replaces what a task requires; an empty list removes the requirement. */
export async function replaceTaskRequirements(tx: Tx, taskId: string, requirements: readonly ReservationRequirement[]): Promise<void> {
  await tx.deleteFrom('task_reservations').where('task_id', '=', taskId).execute();
  if (requirements.length > 0) await insertTaskRequirements(tx, taskId, requirements);
}
