/**
 * The SQL Baton sends for each scenario, copied from what it sent. bench/sql-check.ts compares
 * these with Baton's statements before every benchmark and warns loudly when they drift apart;
 * its report shows the statements to copy here.
 */
import type { Scenario } from './load.ts';

// src/store/tokens.ts findGrantAndCount: the token's grant, counting this request in its rate window.
export const AUTHENTICATE = `
    WITH g AS (
      SELECT t.id AS token_id, t.machine, t.scopes AS token_scopes, t.expires_at, t.revoked_at,
        a.id AS agent_id, a.name AS agent_name, a.kind AS agent_kind, a.scopes AS agent_scopes,
        a.tool_allowlist, a.disabled, a.rate_limit
      FROM tokens t JOIN agents a ON a.id = t.agent_id
      WHERE t.token_hash = $1
    ), counted AS (
      INSERT INTO rate_counters (token_id, window_start, count)
      SELECT token_id, $2, 1 FROM g
      WHERE revoked_at IS NULL AND NOT disabled AND (expires_at IS NULL OR expires_at > $3)
      ON CONFLICT (token_id, window_start) DO UPDATE SET count = rate_counters.count + 1
      RETURNING count
    )
    SELECT g.*, (SELECT count FROM counted) AS used FROM g`;
// src/store/idempotency.ts claimKey
export const CLAIM_KEY = `
    SELECT pg_try_advisory_xact_lock(hashtextextended($1 || ' ' || $2, 0)) AS locked,
      (SELECT json_build_object(
          'fingerprint', encode(fingerprint, 'hex'), 'operation', operation,
          'status_code', status_code, 'response_body', response_body)
        FROM idempotency_keys WHERE principal_id = $3 AND key = $4 AND expires_at > $5) AS stored
  `;
// src/store/tasks.ts taskColumns: every column plus `waiting_on`, the blockers not yet done, and `artifacts`, the references.
const TASK_COLUMNS = `"tasks"."id", "tasks"."title", "tasks"."description", "tasks"."status", "tasks"."priority", "tasks"."labels", "tasks"."version", "tasks"."created_at", "tasks"."created_by_id", "tasks"."created_by_kind", "tasks"."updated_at", "tasks"."updated_by_id", "tasks"."updated_by_kind", "tasks"."lease_id", "tasks"."lease_holder_id", "tasks"."lease_holder_kind", "tasks"."lease_expires_at", "tasks"."lease_epoch", "tasks"."blocked_by", "tasks"."deleted_at", CASE WHEN cardinality(tasks.blocked_by) = 0 THEN '{}'::text[] ELSE ARRAY(SELECT u.id FROM unnest(tasks.blocked_by) AS u(id) WHERE (SELECT b.status <> 'done' AND b.deleted_at IS NULL FROM tasks b WHERE b.id = u.id) ORDER BY u.id) END AS waiting_on, COALESCE((SELECT json_agg(json_build_object('id', a.id, 'size', a.size_bytes, 'content_type', a.content_type, 'sha256', a.sha256) ORDER BY a.id) FROM artifacts a WHERE a.task_id = tasks.id), '[]'::json) AS artifacts`;
// src/store/tasks.ts insertTask, findTask, lockTask, updateTask
export const INSERT_TASK = `
    INSERT INTO tasks (id, title, description, status, priority, labels, blocked_by, created_at, created_by_id, created_by_kind,
      updated_at, updated_by_id, updated_by_kind)
    VALUES ($1, $2, $3, $4, $5, $6::text[], $7::text[],
      $8, $9, $10, $11, $12, $13)
    RETURNING ${TASK_COLUMNS}`;
export const FIND_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`;
export const LOCK_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`;
export const UPDATE_TITLE = `UPDATE tasks SET "title" = $1, "updated_at" = $2, "updated_by_id" = $3, "updated_by_kind" = $4, version = version + 1 WHERE id = $5 RETURNING ${TASK_COLUMNS}`;
// src/store/idempotency.ts storeResponse, carrying src/store/events.ts appending: the response stored and the events appended in
// one statement, which fails (baton_key_taken) rather than store nothing.
export const STORE_RESPONSE_WITH_EVENTS = `    WITH append_lock AS (SELECT pg_advisory_xact_lock(1, 1)), wake AS (SELECT pg_notify($1, '')), appended AS (
    INSERT INTO events (id, type, subject, actor_id, actor_kind, token_id, machine, idempotency_key, approval_id, data, created_at)
    SELECT e.id, e.type, e.subject, e.actor_id, e.actor_kind, e.token_id, e.machine, e.idempotency_key, e.approval_id, e.data, e.created_at
    FROM append_lock, wake, jsonb_to_recordset($2::jsonb) AS e(
      id text, type text, subject text, actor_id text, actor_kind text, token_id text, machine text,
      idempotency_key text, approval_id text, data jsonb, created_at timestamptz)), stored AS (
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
  create: [AUTHENTICATE, 'begin', CLAIM_KEY, INSERT_TASK, STORE_RESPONSE_WITH_EVENTS, 'commit'],
  get: [AUTHENTICATE, FIND_TASK],
  patch: [AUTHENTICATE, 'begin', CLAIM_KEY, LOCK_TASK, UPDATE_TITLE, STORE_RESPONSE_WITH_EVENTS, 'commit'],
};
