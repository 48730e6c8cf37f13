-- Reservations (issue 42 §1): a lease on a named resource, or on path globs within a repository.
-- `lock_key` is what acquisitions serialize on (an advisory lock on its hash): `resource:<name>` or
-- `repo:<key>`; `epoch` counts the acquisitions of one key, so a stale holder is told apart.
CREATE TABLE reservations (
  id text PRIMARY KEY,
  lock_key text NOT NULL,
  resource text,
  repo text,
  paths text[],
  mode text NOT NULL CHECK (mode IN ('exclusive', 'shared')),
  holder_id text NOT NULL,
  holder_kind text NOT NULL,
  task_id text,
  lease_id text,
  epoch integer NOT NULL,
  ttl_s integer NOT NULL,
  acquired_at timestamptz NOT NULL,
  renewed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  ended_at timestamptz,
  end_reason text CHECK (end_reason IN ('released', 'expired', 'lease_ended')),
  CHECK ((resource IS NULL) <> (repo IS NULL)),
  CHECK ((repo IS NULL) = (paths IS NULL))
);

CREATE INDEX reservations_live ON reservations (lock_key) WHERE ended_at IS NULL;
CREATE INDEX reservations_key_epoch ON reservations (lock_key, epoch);
