-- Claims and leases. Invariant: a lease row changes only while its task's row is locked, so
-- locks are always taken task first and claim, heartbeat, release and expiry cannot deadlock.

CREATE TABLE leases (
  id              text PRIMARY KEY,
  task_id         text NOT NULL REFERENCES tasks (id),
  holder_id       text NOT NULL,
  holder_kind     text NOT NULL CHECK (holder_kind IN ('human', 'agent')),
  token_id        text,
  machine         text,
  -- The task's fencing epoch at grant time; it only grows per task.
  epoch           integer NOT NULL,
  ttl_s           integer NOT NULL,
  state           text NOT NULL CHECK (state IN ('active', 'released', 'expired', 'ended')),
  acquired_at     timestamptz NOT NULL,
  renewed_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  -- When lease.expiring was announced for the current term (cleared on renewal).
  warned_at       timestamptz,
  ended_at        timestamptz,
  created_at      timestamptz NOT NULL,
  created_by_id   text NOT NULL,
  created_by_kind text NOT NULL CHECK (created_by_kind IN ('human', 'agent', 'system'))
);
CREATE INDEX leases_task_id ON leases (task_id, acquired_at);
CREATE INDEX leases_holder_active ON leases (holder_id) WHERE state = 'active';
CREATE INDEX leases_active_expires_at ON leases (expires_at) WHERE state = 'active';

-- The task's current lease, denormalised so claims and sweeps read one row.
ALTER TABLE tasks
  ADD COLUMN lease_id text REFERENCES leases (id),
  ADD COLUMN lease_holder_id text,
  ADD COLUMN lease_holder_kind text CHECK (lease_holder_kind IN ('human', 'agent')),
  ADD COLUMN lease_expires_at timestamptz,
  ADD COLUMN lease_epoch integer NOT NULL DEFAULT 0,
  ADD COLUMN blocked_by text[] NOT NULL DEFAULT '{}';

-- Claim-next scans the queue in claim order; expired work is found by its lease expiry.
CREATE INDEX tasks_queue ON tasks (priority DESC, id) WHERE status = 'todo';
CREATE INDEX tasks_lease_expires_at ON tasks (lease_expires_at) WHERE status = 'in_progress';
