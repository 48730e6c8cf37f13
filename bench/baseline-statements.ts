/**
 * The SQL Baton sends for each scenario, copied from what it sent. bench/sql-check.ts compares
 * these with Baton's statements before every benchmark and warns loudly when they drift apart;
 * its report shows the statements to copy here.
 */
import { APPENDING } from '../src/store/events.ts';
import { COMPACT_TASK_COLUMNS, TASK_COLUMNS } from '../src/store/tasks.ts';
import type { Scenario } from './load.ts';

// src/store/tokens.ts findGrantAndCount: the token's grant, counting this request in one of its rate window's 16 rows,
// and in its workspace's when the workspace has a shared budget (migration 0290).
export const AUTHENTICATE = `
    WITH g AS (
      SELECT t.id AS token_id, t.machine, t.scopes AS token_scopes, t.expires_at, t.revoked_at, t.created_by_kind AS token_created_by_kind,
        a.id AS agent_id, a.name AS agent_name, a.kind AS agent_kind, a.scopes AS agent_scopes,
        a.tool_allowlist, a.disabled, a.rate_limit, t.workspace_id, w.rate_limit AS workspace_rate_limit
      FROM tokens t JOIN agents a ON a.id = t.agent_id JOIN workspaces w ON w.id = t.workspace_id
      WHERE t.token_hash = $1
    ), live AS (
      -- A revocation in the future is a rotated token's grace (tokens_rotate): live until then.
      SELECT token_id, workspace_id, workspace_rate_limit FROM g
      WHERE (revoked_at IS NULL OR revoked_at > $3) AND NOT disabled AND (expires_at IS NULL OR expires_at > $3)
    ), counted AS (
      -- One of 16 rows per token and window, by connection (migration 0031): requests on other
      -- connections mostly bump other rows, so a busy token does not queue on one row lock.
      INSERT INTO rate_counters (token_id, window_start, shard, count)
      SELECT token_id, $2, pg_backend_pid() % 16, 1 FROM live
      ON CONFLICT (token_id, window_start, shard) DO UPDATE SET count = rate_counters.count + 1
      RETURNING shard, count
    ), workspace_counted AS (
      -- A workspace with a shared budget (migration 0290) is counted the same way, under its id.
      INSERT INTO rate_counters (token_id, window_start, shard, count)
      SELECT workspace_id, $2, pg_backend_pid() % 16, 1 FROM live WHERE workspace_rate_limit IS NOT NULL
      ON CONFLICT (token_id, window_start, shard) DO UPDATE SET count = rate_counters.count + 1
      RETURNING shard, count
    )
    -- Each row's count after the bump, plus the other rows as of this statement's snapshot.
    SELECT g.*, (SELECT c.count + coalesce((
        SELECT sum(r.count) FROM rate_counters r WHERE r.token_id = g.token_id AND r.window_start = $2 AND r.shard <> c.shard), 0)::int
      FROM counted c) AS used,
      (SELECT c.count + coalesce((
        SELECT sum(r.count) FROM rate_counters r WHERE r.token_id = g.workspace_id AND r.window_start = $2 AND r.shard <> c.shard), 0)::int
      FROM workspace_counted c) AS workspace_used
    FROM g`;
// src/store/workspace-scope.ts bindWorkspace: every operation's transaction, reads included, starts with it (migration 0260).
export const BIND_WORKSPACE = `SELECT set_config('role', $1, true), set_config('baton.workspace', $2, true), set_config('baton.principal', $3, true)`;
// src/store/idempotency.ts claimKey
export const CLAIM_KEY = `
    SELECT pg_try_advisory_xact_lock(hashtextextended($1 || ' ' || $2, 0)) AS locked,
      (SELECT json_build_object(
          'fingerprint', encode(fingerprint, 'hex'), 'operation', operation,
          'status_code', status_code, 'response_body', response_body)
        FROM idempotency_keys WHERE principal_id = $3 AND key = $4 AND expires_at > $5) AS stored
  `;
// src/store/tasks.ts insertTask, findCompactTask, lockTask, updateTask. The column list (every column plus `waiting_on`,
// `artifacts` and `child_counts`, each a subquery) is Baton's own constant: it changes with every new task field.
export const INSERT_TASK = `
    INSERT INTO tasks (id, title, description, status, priority, labels, blocked_by, created_at, created_by_id, created_by_kind,
      updated_at, updated_by_id, updated_by_kind, assignee_id, assignee_kind, max_attempts, parent_id, not_before, due_at, max_cost_micros, max_cost_currency)
    VALUES ($1, $2, $3, $4, $5, $6::text[], $7::text[],
      $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
    RETURNING ${TASK_COLUMNS}`;
// A GET of the default (compact) view reads only that view's columns, Baton's constant too.
export const FIND_TASK = `SELECT ${COMPACT_TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`;
export const LOCK_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`;
export const UPDATE_TITLE = `UPDATE tasks SET "title" = $1, "updated_at" = $2, "updated_by_id" = $3, "updated_by_kind" = $4, version = version + 1 WHERE id = $5 RETURNING ${TASK_COLUMNS}`;
// src/store/idempotency.ts storeResponse, carrying src/store/events.ts APPENDING (Baton's constant, as above): the
// response stored and the events appended in one statement, which fails (baton_key_taken) rather than store nothing.
export const STORE_RESPONSE_WITH_EVENTS = `
    WITH ${APPENDING}, stored AS (
      INSERT INTO idempotency_keys (principal_id, key, fingerprint, operation, status_code, response_body, created_at, expires_at)
      VALUES ($3, $4, $5, $6, $7, $8, $9, $10)
      ON CONFLICT (principal_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, operation = excluded.operation,
        status_code = excluded.status_code, response_body = excluded.response_body, created_at = excluded.created_at,
        expires_at = excluded.expires_at
      WHERE idempotency_keys.expires_at <= $11
      RETURNING key)
    SELECT key FROM stored
    UNION ALL SELECT baton_key_taken() WHERE NOT EXISTS (SELECT FROM stored)`;

/** Per scenario, every statement the baseline sends for one request, in order, as Baton sends them. */
export const BASELINE_STATEMENTS: Record<Scenario, readonly string[]> = {
  create: [AUTHENTICATE, 'begin', BIND_WORKSPACE, CLAIM_KEY, INSERT_TASK, STORE_RESPONSE_WITH_EVENTS, 'commit'],
  get: [AUTHENTICATE, 'begin', BIND_WORKSPACE, FIND_TASK, 'commit'],
  patch: [AUTHENTICATE, 'begin', BIND_WORKSPACE, CLAIM_KEY, LOCK_TASK, UPDATE_TITLE, STORE_RESPONSE_WITH_EVENTS, 'commit'],
};
