-- Security model: approvals for destructive and outward operations, per-token rate limits,
-- and task deletion (a tombstone, so the append-only timeline keeps its subject).

ALTER TABLE agents ADD COLUMN rate_limit integer CHECK (rate_limit > 0);
ALTER TABLE tasks ADD COLUMN deleted_at timestamptz;
ALTER TABLE events ADD COLUMN approval_id text;

CREATE TABLE approvals (
  id                 text PRIMARY KEY,
  operation          text NOT NULL,
  -- The exact validated input that will run, and its fingerprint (operation + canonical input).
  input              jsonb NOT NULL,
  fingerprint        bytea NOT NULL,
  -- The resource the operation acts on and its version when requested: a change meanwhile makes the approval stale.
  target_id          text,
  target_version     integer,
  status             text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'failed')),
  requested_by_id    text NOT NULL,
  requested_by_kind  text NOT NULL CHECK (requested_by_kind IN ('human', 'agent')),
  requested_token_id text NOT NULL,
  requested_machine  text NOT NULL,
  requested_scopes   text[] NOT NULL,
  idempotency_key    text NOT NULL,
  decided_by_id      text,
  decided_by_kind    text CHECK (decided_by_kind IN ('human', 'agent', 'system')),
  decided_at         timestamptz,
  reason             text,
  result_status      smallint,
  result_body        text,
  expires_at         timestamptz NOT NULL,
  created_at         timestamptz NOT NULL,
  created_by_id      text NOT NULL,
  created_by_kind    text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system'))
);
CREATE INDEX approvals_status_id ON approvals (status, id);

-- Request counts per token and fixed window. UNLOGGED: no WAL, so counting costs no disk flush;
-- after a crash the counts restart from zero, which only forgives one window.
CREATE UNLOGGED TABLE rate_counters (
  token_id     text NOT NULL,
  window_start bigint NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (token_id, window_start)
);
