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

/**
 * `claimKey` for the calls of one group (service/write-groups.ts), in one round trip: each claim in
 * the order of `keys`. The caller sends each principal's key at most once (a session's advisory
 * lock is re-entrant, so a repeat would claim it twice).
 */
export async function claimKeys(tx: Tx, keys: readonly { principalId: string; key: string }[], now: Date): Promise<KeyClaim[]> {
  const [one] = keys;
  if (keys.length === 1 && one) return [await claimKey(tx, one.principalId, one.key, now)];
  const { rows } = await sendStatement<{ locked: boolean; stored: (StoredResponse & { fingerprint: string }) | null }>(
    tx,
    CLAIM_KEYS,
    [keys.map((k) => k.principalId), keys.map((k) => k.key), now],
  );
  return rows.map((row) => {
    if (row.stored) return { state: 'stored', response: { ...row.stored, fingerprint: Buffer.from(row.stored.fingerprint, 'hex') } };
    return row.locked ? { state: 'fresh' } : { state: 'in_flight' };
  });
}

// Parameters: the principals, their keys (same length), now. As CLAIM_KEY, one row per key in order.
const CLAIM_KEYS = `
    SELECT pg_try_advisory_xact_lock(hashtextextended(u.principal_id || ' ' || u.key, 0)) AS locked,
      (SELECT json_build_object(
          'fingerprint', encode(fingerprint, 'hex'), 'operation', operation,
          'status_code', status_code, 'response_body', response_body)
        FROM idempotency_keys k WHERE k.principal_id = u.principal_id AND k.key = u.key AND k.expires_at > $3) AS stored
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(principal_id, key, ord)
    ORDER BY u.ord`;

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

/**
 * `storeResponse` for the calls of one group, with all their events, in one statement: false (and
 * nothing stored) when a live entry already holds any of the keys. The rows share `created_at`.
 */
export async function storeResponses(tx: Tx, rows: readonly NewStoredResponse[], events: readonly NewEventRow[]): Promise<boolean> {
  const [first] = rows;
  if (first === undefined) return true;
  if (rows.length === 1) return storeResponse(tx, first, events);
  const stored = rows.map((r) => ({
    principal_id: r.principal_id, key: r.key, fingerprint: Buffer.from(r.fingerprint).toString('hex'), operation: r.operation,
    status_code: r.status_code, response_body: r.response_body, expires_at: r.expires_at.toISOString(),
  }));
  try {
    await sendStatement(tx, events.length > 0 ? STORE_MANY_WITH_EVENTS : STORE_MANY, [
      ...(events.length > 0 ? appendParameters(events) : []),
      JSON.stringify(stored), first.created_at, rows.length,
    ]);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === KEY_TAKEN) return false;
    throw error;
  }
}

/** As `storing`, for many rows sent as one JSON array; parameters from `first`: the rows, now (their `created_at`), how many. */
function storingMany(first: number): string {
  const [rows, now, count] = [`$${first}`, `$${first + 1}`, `$${first + 2}`];
  return storingRows(
    `SELECT r.principal_id, r.key, decode(r.fingerprint, 'hex'), r.operation, r.status_code, r.response_body, ${now}, r.expires_at
      FROM jsonb_to_recordset(${rows}::jsonb) AS r(principal_id text, key text, fingerprint text, operation text, status_code smallint,
        response_body text, expires_at timestamptz)`,
    now,
    `(SELECT count(*) FROM stored) < ${count}`,
  );
}

const STORE_MANY = `
    WITH ${storingMany(1)}`;
const STORE_MANY_WITH_EVENTS = `
    WITH ${APPENDING}, ${storingMany(3)}`;

/** The stored response's insert, its parameters numbered from `first`. An expired entry may be replaced; a live one never is. */
function storing(first: number): string {
  const [principal, key, print, operation, status, body, createdAt, expiresAt, now = ''] = Array.from({ length: 9 }, (_, i) => `$${first + i}`);
  return storingRows(`VALUES (${principal}, ${key}, ${print}, ${operation}, ${status}, ${body}, ${createdAt}, ${expiresAt})`, now, 'NOT EXISTS (SELECT FROM stored)');
}

/** The `stored` CTE inserting `rows`, then failing with `baton_key_taken()` when `short` (fewer stored than sent) holds. */
function storingRows(rows: string, now: string, short: string): string {
  return `stored AS (
      INSERT INTO idempotency_keys (principal_id, key, fingerprint, operation, status_code, response_body, created_at, expires_at)
      ${rows}
      ON CONFLICT (principal_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, operation = excluded.operation,
        status_code = excluded.status_code, response_body = excluded.response_body, created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= ${now}
      RETURNING key)
    SELECT key FROM stored
    UNION ALL SELECT baton_key_taken() WHERE ${short}`;
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
