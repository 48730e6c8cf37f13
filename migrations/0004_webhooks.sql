-- Outbound webhooks: subscriptions and their delivery log. The signing secret is never stored:
-- secret_ref says how to get it (`derived:v1` = HMAC of BATON_SECRET_KEY and the row id).

CREATE TABLE webhooks (
  id              text PRIMARY KEY,
  url             text NOT NULL,
  -- NULL: every event type; otherwise only these.
  event_types     text[],
  enabled         boolean NOT NULL,
  secret_ref      text NOT NULL,
  -- The last event seq fanned out into deliveries; the worker moves it forward.
  cursor_seq      bigint NOT NULL,
  disabled_reason text,
  version         integer NOT NULL DEFAULT 1,
  deleted_at      timestamptz,
  created_at      timestamptz NOT NULL,
  created_by_id   text NOT NULL,
  created_by_kind text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system')),
  updated_at      timestamptz NOT NULL,
  updated_by_id   text NOT NULL,
  updated_by_kind text NOT NULL CHECK (updated_by_kind IN ('human', 'agent', 'system'))
);
CREATE INDEX webhooks_live ON webhooks (id) WHERE enabled AND deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  webhook_id      text NOT NULL REFERENCES webhooks (id),
  event_id        text NOT NULL,
  event_seq       bigint NOT NULL,
  state           text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  -- Attempts made in the current round (a replay starts a new round).
  attempt_count   integer NOT NULL DEFAULT 0,
  -- Every attempt ever made: [{at, status, duration_ms, error}].
  attempts        jsonb NOT NULL DEFAULT '[]',
  -- When the next attempt is due; a worker taking it pushes this past its timeout (its claim).
  next_attempt_at timestamptz NOT NULL,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, event_seq);
