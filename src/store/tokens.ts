import { sql, type Kysely, type Selectable } from 'kysely';
import { sendStatement, type Tx } from './connection.ts';
import type { DB, TokensTable } from './schema.ts';

export type TokenRow = Selectable<TokensTable>;

export interface NewTokenRow {
  id: string;
  agent_id: string;
  machine: string;
  token_hash: Uint8Array;
  token_prefix: string;
  scopes: string[];
  expires_at: Date | null;
  created_at: Date;
  created_by_id: string;
  created_by_kind: string;
}

/**
 * Inserts a token unless its principal already has a live (unrevoked) one for the machine label;
 * then answers undefined. The partial unique index decides, so this holds under any concurrency: a
 * racing insert waits for the first to commit and then inserts nothing.
 */
export async function insertToken(tx: Tx, row: NewTokenRow): Promise<TokenRow | undefined> {
  return tx
    .insertInto('tokens')
    .values(row)
    .onConflict((oc) => oc.columns(['agent_id', 'machine']).where('revoked_at', 'is', null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** What authentication needs of a token and its agent, plus this window's request count. */
export interface TokenGrant {
  token_id: string;
  machine: string;
  token_scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  agent_id: string;
  agent_name: string;
  agent_kind: 'human' | 'agent';
  agent_scopes: string[];
  tool_allowlist: string[] | null;
  disabled: boolean;
  rate_limit: number | null;
  /** The workspace of the token (and its principal). */
  workspace_id: string;
  /** Who made the token: `system` for the bootstrap and recovery tokens. */
  token_created_by_kind: string;
  /** Operations this token spent in the current window, this request's included; null when the grant is unusable. */
  used: number | null;
  /** The workspace's budget shared by all its tokens per window (workspaces_update); null: none. */
  workspace_rate_limit: number | null;
  /** Operations of all the workspace's tokens in the current window, this request's included; null without a budget or a usable grant. */
  workspace_used: number | null;
  /** What this request was charged: its operations when they all fitted in what was left, else 1; null when the grant is unusable. */
  charged: number | null;
}

/** What one request spends of a token's rate window. */
export interface RateCharge {
  /** The window's start, in epoch seconds. */
  readonly windowStart: number;
  /** The operations the request carries: 1, or a GraphQL document's mutations, an MCP batch's tool calls. */
  readonly operations: number;
  /** The server's limit, for a principal without its own `rate_limit`. */
  readonly defaultLimit: number;
}

/**
 * Looks a token up by hash and, if it is usable, counts this request's operations in its rate window (and in its
 * workspace's, when the workspace has a shared budget) and records its use (`last_used_at`, to the
 * minute) — one statement, so authentication and the shared rate limit cost a single round trip. A request of
 * several operations is charged them all only when they all fit in what is left of both budgets, else it is
 * charged 1, as any refused request is (`charged` says which). `used` is exact
 * but for requests of the same token in flight at the same moment on other connections, which it
 * may not include yet (spec/api.md, Rate limits). Every
 * instance reads the same rows, so a revocation applies everywhere at once.
 */
export async function findGrantAndCount(db: Kysely<DB>, hash: Uint8Array, charge: RateCharge, now: Date): Promise<TokenGrant | undefined> {
  const { rows } = await sendStatement<TokenGrant>(db, FIND_GRANT_AND_COUNT, [hash, charge.windowStart, now, charge.operations, charge.defaultLimit]);
  return rows[0];
}

// Parameters: the token's hash, the rate window's start (epoch seconds), now, the request's operations, the default limit.
const FIND_GRANT_AND_COUNT = `
    WITH g AS (
      SELECT t.id AS token_id, t.machine, t.scopes AS token_scopes, t.expires_at, t.revoked_at, t.created_by_kind AS token_created_by_kind,
        a.id AS agent_id, a.name AS agent_name, a.kind AS agent_kind, a.scopes AS agent_scopes,
        a.tool_allowlist, a.disabled, a.rate_limit, t.workspace_id, w.rate_limit AS workspace_rate_limit
      FROM tokens t JOIN agents a ON a.id = t.agent_id JOIN workspaces w ON w.id = t.workspace_id
      WHERE t.token_hash = $1
    ), live AS (
      -- A revocation in the future is a rotated token's grace (tokens_rotate): live until then.
      -- One of 16 rows per token and window, by connection (migration 0031): requests on other
      -- connections mostly bump other rows, so a busy token does not queue on one row lock.
      SELECT token_id, workspace_id, coalesce(rate_limit, $5::int) AS token_limit, workspace_rate_limit, pg_backend_pid() % 16 AS shard FROM g
      WHERE (revoked_at IS NULL OR revoked_at > $3) AND NOT disabled AND (expires_at IS NULL OR expires_at > $3)
    ), prior AS (
      -- The window's rows as of this statement's snapshot: the others', and all (this connection's too).
      SELECT l.*, t.others AS token_others, t.total AS token_total, w.others AS workspace_others, w.total AS workspace_total
      FROM live l
      CROSS JOIN LATERAL (SELECT coalesce(sum(r.count) FILTER (WHERE r.shard <> l.shard), 0)::int AS others, coalesce(sum(r.count), 0)::int AS total
        FROM rate_counters r WHERE r.token_id = l.token_id AND r.window_start = $2) t
      CROSS JOIN LATERAL (SELECT coalesce(sum(r.count) FILTER (WHERE r.shard <> l.shard), 0)::int AS others, coalesce(sum(r.count), 0)::int AS total
        FROM rate_counters r WHERE l.workspace_rate_limit IS NOT NULL AND r.token_id = l.workspace_id AND r.window_start = $2) w
    ), charge AS (
      -- A request of several operations is charged them all only if they all fit, else 1 (and refused).
      SELECT *, CASE WHEN $4::int = 1 OR (token_total + $4::int <= token_limit
        AND (workspace_rate_limit IS NULL OR workspace_total + $4::int <= workspace_rate_limit)) THEN $4::int ELSE 1 END AS n
      FROM prior
    ), counted AS (
      INSERT INTO rate_counters (token_id, window_start, shard, count)
      SELECT token_id, $2, shard, n FROM charge
      ON CONFLICT (token_id, window_start, shard) DO UPDATE SET count = rate_counters.count + excluded.count
      RETURNING count
    ), workspace_counted AS (
      -- A workspace with a shared budget (migration 0290) is counted the same way, under its id.
      INSERT INTO rate_counters (token_id, window_start, shard, count)
      SELECT workspace_id, $2, shard, n FROM charge WHERE workspace_rate_limit IS NOT NULL
      ON CONFLICT (token_id, window_start, shard) DO UPDATE SET count = rate_counters.count + excluded.count
      RETURNING count
    ), touched AS (
      -- \`last_used_at\`, kept to the minute: the token's row is written at most once a minute, here
      -- rather than by a statement and round trip of its own on each token's first request a minute.
      UPDATE tokens SET last_used_at = $3 FROM live
      WHERE tokens.id = live.token_id AND (tokens.last_used_at IS NULL OR tokens.last_used_at < $3::timestamptz - interval '1 minute')
    )
    -- This connection's row after the bump, plus the other rows as of this statement's snapshot.
    SELECT g.*, (SELECT c.count + p.token_others FROM counted c, charge p) AS used,
      (SELECT c.count + p.workspace_others FROM workspace_counted c, charge p) AS workspace_used,
      (SELECT n FROM charge) AS charged
    FROM g`;

/** A token's grant by id (no rate count): for acting on a principal's behalf later, as an approval does. */
export async function findGrantById(db: Kysely<DB>, tokenId: string): Promise<TokenGrant | undefined> {
  return (await findGrantsByIds(db, [tokenId]))[0];
}

/** The grants of the tokens `tokenIds` that exist, in no order, without counting a request (one statement for any number). */
export async function findGrantsByIds(db: Kysely<DB>, tokenIds: readonly string[]): Promise<TokenGrant[]> {
  const { rows } = await sql<TokenGrant>`
    SELECT t.id AS token_id, t.machine, t.scopes AS token_scopes, t.expires_at, t.revoked_at, t.created_by_kind AS token_created_by_kind,
      a.id AS agent_id, a.name AS agent_name, a.kind AS agent_kind, a.scopes AS agent_scopes,
      a.tool_allowlist, a.disabled, a.rate_limit, t.workspace_id, NULL::int AS used, NULL::int AS workspace_rate_limit, NULL::int AS workspace_used,
      NULL::int AS charged
    FROM tokens t JOIN agents a ON a.id = t.agent_id
    WHERE t.id = ANY(${[...tokenIds]}::text[])`.execute(db);
  return rows;
}

export async function findToken(db: Kysely<DB>, id: string): Promise<TokenRow | undefined> {
  return db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function lockToken(tx: Tx, id: string): Promise<TokenRow | undefined> {
  return tx.selectFrom('tokens').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** An agent's tokens, newest first; `limit + 1` rows for has_more. */
export async function listTokens(db: Kysely<DB>, agentId: string, beforeId: string | undefined, limit: number): Promise<TokenRow[]> {
  return db
    .selectFrom('tokens')
    .selectAll()
    .where('agent_id', '=', agentId)
    .$if(beforeId !== undefined, (qb) => qb.where('id', '<', beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

/**
 * Revokes a token as of `at`: now, or the end of a rotated token's grace. Either way its machine
 * label is free at once (the one-live-token index counts only rows with no revocation).
 */
export async function revokeToken(tx: Tx, id: string, at: Date): Promise<TokenRow> {
  return tx.updateTable('tokens').set({ revoked_at: at }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Revokes every live token of an agent (used when a principal is deleted upstream). */
export async function revokeAgentTokens(tx: Tx, agentId: string, now: Date): Promise<string[]> {
  const rows = await tx
    .updateTable('tokens')
    .set({ revoked_at: now })
    .where('agent_id', '=', agentId)
    // Tokens in a rotation's grace too.
    .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>', now)]))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Drops counters (of tokens and of workspaces) of windows that have closed. */
export async function pruneRateCounters(db: Kysely<DB>, beforeWindow: number): Promise<number> {
  const result = await db.deleteFrom('rate_counters').where('window_start', '<', String(beforeWindow)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
