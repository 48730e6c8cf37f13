import { type Kysely, sql } from 'kysely';
import { APPENDING, appendParameters, type NewEventRow } from './events.ts';
import type { DB } from './schema.ts';
import { sendStatement, type Tx } from './connection.ts';

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
export async function claimKey(tx: Tx, principalId: string, key: string, now: Date): Promise<KeyClaim> {
  const { rows } = await sendStatement<{ locked: boolean; stored: StoredResponse | null }>(tx, CLAIM_KEY, [principalId, key, principalId, key, now]);
  const row = rows[0];
  if (row?.stored) {
    const stored = row.stored as unknown as StoredResponse & { fingerprint: string };
    return { state: 'stored', response: { ...stored, fingerprint: Buffer.from(stored.fingerprint, 'hex') } };
  }
  return row?.locked ? { state: 'fresh' } : { state: 'in_flight' };
}

// Parameters: principal and key (for the lock), principal and key (for the lookup), now.
const CLAIM_KEY = `
    SELECT pg_try_advisory_xact_lock(hashtextextended($1 || ' ' || $2, 0)) AS locked,
      (SELECT json_build_object(
          'fingerprint', encode(fingerprint, 'hex'), 'operation', operation,
          'status_code', status_code, 'response_body', response_body)
        FROM idempotency_keys WHERE principal_id = $3 AND key = $4 AND expires_at > $5) AS stored
  `;

export interface NewStoredResponse extends StoredResponse {
  principal_id: string;
  key: string;
  created_at: Date;
  expires_at: Date;
}

/**
 * Stores a response under its key, and appends the write's events in the same statement (one
 * round trip for a write's last two steps; see `appending`). If a live entry already holds the key, the statement fails
 * instead (`baton_key_taken`, SQLSTATE BK001), so nothing commits; this returns false and the
 * caller rolls back.
 */
export async function storeResponse(tx: Tx, row: NewStoredResponse, events: readonly NewEventRow[] = []): Promise<boolean> {
  const stored = [row.principal_id, row.key, row.fingerprint, row.operation, row.status_code, row.response_body, row.created_at, row.expires_at, row.created_at];
  try {
    if (events.length > 0) await sendStatement(tx, STORE_WITH_EVENTS, [...appendParameters(events), ...stored]);
    else await sendStatement(tx, STORE, stored);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === KEY_TAKEN) return false;
    throw error;
  }
}

/** The stored response's insert, its parameters numbered from `first`. An expired entry may be replaced; a live one never is. */
function storing(first: number): string {
  const [principal, key, print, operation, status, body, createdAt, expiresAt, now] = Array.from({ length: 9 }, (_, i) => `$${first + i}`);
  return `stored AS (
      INSERT INTO idempotency_keys (principal_id, key, fingerprint, operation, status_code, response_body, created_at, expires_at)
      VALUES (${principal}, ${key}, ${print}, ${operation}, ${status}, ${body}, ${createdAt}, ${expiresAt})
      ON CONFLICT (principal_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, operation = excluded.operation,
        status_code = excluded.status_code, response_body = excluded.response_body, created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= ${now}
      RETURNING key)
    SELECT key FROM stored
    UNION ALL SELECT baton_key_taken() WHERE NOT EXISTS (SELECT FROM stored)`;
}

const STORE = `
    WITH ${storing(1)}`;
const STORE_WITH_EVENTS = `
    WITH ${APPENDING}, ${storing(3)}`;

/** SQLSTATE of `baton_key_taken()` (migrations/0006_key_taken.sql). */
const KEY_TAKEN = 'BK001';

/**
 * Deletes up to `limit` rows of `table` past their `expires_at` (idempotency keys after their 24 h,
 * MCP tasks after theirs); returns how many went. Rows another instance is deleting are skipped.
 */
export async function pruneExpired(db: Kysely<DB>, table: 'idempotency_keys' | 'mcp_tasks', now: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM ${sql.table(table)} WHERE ctid IN (
        SELECT ctid FROM ${sql.table(table)} WHERE expires_at <= ${now} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return rows[0]?.n ?? 0;
}
