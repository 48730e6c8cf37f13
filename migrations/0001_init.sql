-- Baton's initial schema. Applied identically on PostgreSQL and PGlite.
-- Provenance: every row records who wrote it (id) and what kind of actor that was.

CREATE TABLE agents (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('human', 'agent')),
  scopes          text[] NOT NULL,
  -- NULL: every operation the scopes allow; otherwise only these operation names.
  tool_allowlist  text[],
  disabled        boolean NOT NULL DEFAULT false,
  version         integer NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL,
  created_by_id   text NOT NULL,
  created_by_kind text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system')),
  updated_at      timestamptz NOT NULL,
  updated_by_id   text NOT NULL,
  updated_by_kind text NOT NULL CHECK (updated_by_kind IN ('human', 'agent', 'system'))
);

CREATE TABLE tokens (
  id              text PRIMARY KEY,
  agent_id        text NOT NULL REFERENCES agents (id),
  machine         text NOT NULL,
  -- SHA-256 of the whole token; the token itself is never stored.
  token_hash      bytea NOT NULL UNIQUE,
  -- The first characters, so a human can tell tokens apart in a list.
  token_prefix    text NOT NULL,
  scopes          text[] NOT NULL,
  expires_at      timestamptz,
  last_used_at    timestamptz,
  revoked_at      timestamptz,
  created_at      timestamptz NOT NULL,
  created_by_id   text NOT NULL,
  created_by_kind text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system'))
);
CREATE INDEX tokens_agent_id ON tokens (agent_id);

CREATE TABLE tasks (
  id              text PRIMARY KEY,
  title           text NOT NULL,
  description     text NOT NULL DEFAULT '',
  status          text NOT NULL CHECK (status IN ('todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled')),
  -- 0 low, 1 normal, 2 high, 3 urgent (domain/task-priority.ts).
  priority        smallint NOT NULL CHECK (priority BETWEEN 0 AND 3),
  labels          text[] NOT NULL DEFAULT '{}',
  version         integer NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL,
  created_by_id   text NOT NULL,
  created_by_kind text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system')),
  updated_at      timestamptz NOT NULL,
  updated_by_id   text NOT NULL,
  updated_by_kind text NOT NULL CHECK (updated_by_kind IN ('human', 'agent', 'system'))
);
CREATE INDEX tasks_status_id ON tasks (status, id);

CREATE TABLE events (
  -- Commit order. Assigned while holding the event-append lock, so a reader that has seen
  -- seq N has seen every event below N (store/events.ts).
  seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id              text PRIMARY KEY,
  type            text NOT NULL,
  subject         text NOT NULL,
  actor_id        text NOT NULL,
  actor_kind      text NOT NULL CHECK (actor_kind IN ('human', 'agent', 'system')),
  token_id        text,
  machine         text,
  idempotency_key text,
  data            jsonb NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX events_subject_seq ON events (subject, seq);
CREATE INDEX events_type_seq ON events (type, seq);

-- Events are append-only: no UPDATE, DELETE or TRUNCATE path exists, and the database refuses one.
CREATE FUNCTION baton_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION baton_events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION baton_events_append_only();

CREATE TABLE idempotency_keys (
  principal_id    text NOT NULL,
  key             text NOT NULL,
  -- SHA-256 of the operation and its canonical input.
  fingerprint     bytea NOT NULL,
  operation       text NOT NULL,
  status_code     smallint NOT NULL,
  -- The exact response text, so a replay is byte-identical.
  response_body   text NOT NULL,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (principal_id, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
