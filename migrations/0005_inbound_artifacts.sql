-- Inbound webhooks (payments, auth provider) and artifacts.

-- One row per accepted provider delivery: the primary key is the dedupe (a replay finds its row).
CREATE TABLE inbound_deliveries (
  provider          text NOT NULL CHECK (provider IN ('payments', 'auth')),
  provider_event_id text NOT NULL,
  provider_type     text NOT NULL,
  -- The Baton event recorded for the delivery.
  event_id          text NOT NULL,
  received_at       timestamptz NOT NULL,
  PRIMARY KEY (provider, provider_event_id)
);

-- The billing record. Baton is one workspace per deployment, so the record is keyed by the
-- payment provider's customer id; a deployment normally has one.
CREATE TABLE billing_accounts (
  customer_id         text PRIMARY KEY,
  email               text,
  checkout_session_id text,
  subscription_id     text,
  subscription_status text,
  price_id            text,
  last_invoice_id     text,
  last_invoice_status text CHECK (last_invoice_status IN ('paid', 'payment_failed')),
  version             integer NOT NULL DEFAULT 1,
  created_at          timestamptz NOT NULL,
  created_by_id       text NOT NULL,
  created_by_kind     text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system')),
  updated_at          timestamptz NOT NULL,
  updated_by_id       text NOT NULL,
  updated_by_kind     text NOT NULL CHECK (updated_by_kind IN ('human', 'agent', 'system'))
);

-- Humans announced by the auth provider: its user id and primary email.
ALTER TABLE agents ADD COLUMN external_id text UNIQUE;
ALTER TABLE agents ADD COLUMN email text;

CREATE TABLE artifacts (
  id              text PRIMARY KEY,
  task_id         text REFERENCES tasks (id),
  name            text,
  content_type    text NOT NULL,
  size_bytes      integer NOT NULL CHECK (size_bytes >= 0),
  -- Lowercase hex SHA-256 of the bytes; also the content's ETag.
  sha256          text NOT NULL,
  created_at      timestamptz NOT NULL,
  created_by_id   text NOT NULL,
  created_by_kind text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system'))
);
CREATE INDEX artifacts_task_id ON artifacts (task_id, id) WHERE task_id IS NOT NULL;

-- The bytes, apart from the metadata: the database ArtifactStore. An object store would replace this table.
CREATE TABLE artifact_contents (
  artifact_id text PRIMARY KEY REFERENCES artifacts (id),
  content     bytea NOT NULL
);
