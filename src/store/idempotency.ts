import { type Kysely, sql, type Transaction } from 'kysely';
import { appending, type NewEventRow } from './events.ts';
import { THEN_COMMIT } from './prepared-client.ts';
import type { DB } from './schema.ts';

export interface StoredResponse {
  fingerprint: Uint8Array;
  operation: string;
  status_code: number;
  response_body: string;
}

export type KeyClaim = { state: 'fresh' } | { state: 'in_flight' } | { state: 'stored'; response: StoredResponse };

/**
 * Claims an idempotency key for this transaction. A transaction-scoped advisory lock on the key
 * tells a concurrent duplicate (`in_flight`) from a finished one (`stored`); the primary key on
 * insert (`storeResponse`) is the final guard if the two race past this check.
 */
export async function claimKey(tx: Transaction<DB>, principalId: string, key: string, now: Date): Promise<KeyClaim> {
  const { rows } = await sql<{ locked: boolean; stored: StoredResponse | null }>`
    SELECT pg_try_advisory_xact_lock(hashtextextended(${principalId} || ' ' || ${key}, 0)) AS locked,
      (SELECT json_build_object(
          'fingerprint', encode(fingerprint, 'hex'), 'operation', operation,
          'status_code', status_code, 'response_body', response_body)
        FROM idempotency_keys WHERE principal_id = ${principalId} AND key = ${key} AND expires_at > ${now}) AS stored
  `.execute(tx);
  const row = rows[0];
  if (row?.stored) {
    const stored = row.stored as unknown as StoredResponse & { fingerprint: string };
    return { state: 'stored', response: { ...stored, fingerprint: Buffer.from(stored.fingerprint, 'hex') } };
  }
  return row?.locked ? { state: 'fresh' } : { state: 'in_flight' };
}

export interface NewStoredResponse extends StoredResponse {
  principal_id: string;
  key: string;
  created_at: Date;
  expires_at: Date;
}

/**
 * Stores a response under its key, and appends the write's events in the same statement (one
 * round trip for a write's last two steps; see `appending`). It is the write's last statement and
 * commits with it (`THEN_COMMIT`). If a live entry already holds the key, the statement fails
 * instead (`baton_key_taken`, SQLSTATE BK001), so nothing commits; this returns false and the
 * caller rolls back.
 */
export async function storeResponse(tx: Transaction<DB>, row: NewStoredResponse, events: readonly NewEventRow[] = []): Promise<boolean> {
  // An expired entry may be replaced; a live one never is.
  const statement = sql<{ key: string }>`${sql.raw(THEN_COMMIT)}
    WITH ${events.length > 0 ? sql`${appending(events)},` : sql``} stored AS (
      INSERT INTO idempotency_keys (principal_id, key, fingerprint, operation, status_code, response_body, created_at, expires_at)
      VALUES (${row.principal_id}, ${row.key}, ${row.fingerprint}, ${row.operation}, ${row.status_code}, ${row.response_body}, ${row.created_at}, ${row.expires_at})
      ON CONFLICT (principal_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, operation = excluded.operation,
        status_code = excluded.status_code, response_body = excluded.response_body, created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= ${row.created_at}
      RETURNING key)
    SELECT key FROM stored
    UNION ALL SELECT baton_key_taken() WHERE NOT EXISTS (SELECT FROM stored)`;
  try {
    await statement.execute(tx);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === KEY_TAKEN) return false;
    throw error;
  }
}

/** SQLSTATE of `baton_key_taken()` (migrations/0006_key_taken.sql). */
const KEY_TAKEN = 'BK001';

/** Deletes up to `limit` expired keys; returns how many went. */
export async function pruneKeys(db: Kysely<DB>, now: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM idempotency_keys WHERE ctid IN (
        SELECT ctid FROM idempotency_keys WHERE expires_at <= ${now} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return rows[0]?.n ?? 0;
}
