-- Budgets (issue 41 §2): a limit on what runs spend, per agent, per label or for one task's
-- lifetime, in money (micro-units of one currency), tokens or runs, per calendar day, ISO week or
-- month in UTC. What a window spent is the sum of its rows in `budget_spend`, written by each usage
-- report (in the report's own transaction, so a replayed report, answered from its stored response,
-- never adds again) and each claim of a run; inserts, not a counter, so that 32 agents reporting
-- against one budget never queue on its row. `warned_for` and `exhausted_for` name the window whose
-- warning and exhaustion events were written, so each is written once per window (a compare-and-set
-- on the budget's row). Expand only: new tables and indexes.
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

-- What each report or claim spent from a budget, in the window it fell in (an override by a human
-- is a row too: the difference it makes).
CREATE TABLE budget_spend (
  budget_id text NOT NULL REFERENCES budgets (id),
  window_start timestamptz NOT NULL,
  amount bigint NOT NULL,
  at timestamptz NOT NULL
);
-- A window's sum, read by every claim and heartbeat on the budget.
CREATE INDEX budget_spend_window ON budget_spend (budget_id, window_start) INCLUDE (amount);
