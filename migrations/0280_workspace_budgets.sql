-- Workspace budgets (issue 41, spec/runs.md "Budgets"): `applies_to` takes `workspace`, a budget
-- every run of its workspace spends from; its `target` is the workspace's id (row-level security
-- already keeps it, and what it spent, to that workspace).
-- Expand only: the CHECK widens, and every existing row satisfies it. The previous release never
-- matches a workspace budget to a run (so, during a rolling deploy, its instances do not enforce
-- one) and lists it as it stores it.
ALTER TABLE budgets DROP CONSTRAINT budgets_applies_to_check,
  ADD CONSTRAINT budgets_applies_to_check CHECK (applies_to IN ('agent', 'label', 'task', 'workspace'));
