-- Attempts, failure and a dead-letter (issue 25 §4): each lease that ends without a hand-in
-- (expiry, or a release reporting failure) counts an attempt; exhausted tasks leave the queue.

ALTER TABLE tasks
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  -- NULL: the configured default (BATON_MAX_ATTEMPTS).
  ADD COLUMN max_attempts integer CHECK (max_attempts BETWEEN 1 AND 100),
  -- Not claimable before this time (back-off after a failed attempt).
  ADD COLUMN not_before timestamptz,
  -- Why a blocked task is blocked, when the server blocked it: 'attempts_exhausted'.
  ADD COLUMN blocked_reason text CHECK (blocked_reason IN ('attempts_exhausted')),
  -- The last failures, newest last (at most 5): [{at, kind, reason, lease_id, holder_id}].
  ADD COLUMN failures jsonb NOT NULL DEFAULT '[]';

-- The dead-letter view.
CREATE INDEX tasks_dead_letter ON tasks (id) WHERE blocked_reason IS NOT NULL;
