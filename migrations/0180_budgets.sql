-- Budgets (issue 41 §2): a limit on what runs spend, per agent, per label or for one task's
-- lifetime, in money (micro-units of one currency), tokens or runs, per calendar day, ISO week or
-- month in UTC. `spent` is what the window that starts at `window_start` spent; a report or a claim
-- in a later window starts it over. Usage reports add to it in their own transaction, so a replayed
-- report (answered from its stored response) never adds again. `warned_for` and `exhausted_for`
-- name the window whose warning and exhaustion events were written, so each is written once per
-- window. Expand only: a new table and an index.
CREATE TABLE budgets (
  id text PRIMARY KEY,
  name text NOT NULL,
  applies_to text NOT NULL CHECK (applies_to IN ('agent', 'label', 'task')),
  -- A principal id, a label, or a task id.
  target text NOT NULL,
  unit text NOT NULL CHECK (unit IN ('cost', 'tokens', 'runs')),
  currency text CHECK ((unit = 'cost') = (currency IS NOT NULL)),
  period text NOT NULL CHECK (period IN ('day', 'week', 'month', 'lifetime')),
  limit_amount bigint NOT NULL CHECK (limit_amount > 0),
  window_start timestamptz NOT NULL,
  spent bigint NOT NULL DEFAULT 0 CHECK (spent >= 0),
  warned_for timestamptz,
  exhausted_for timestamptz,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamptz NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL
);

-- The budgets a claim or a report spends from: by what they apply to.
CREATE INDEX budgets_target ON budgets (applies_to, target) WHERE deleted_at IS NULL;
