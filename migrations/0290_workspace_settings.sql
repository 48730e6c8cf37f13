-- A workspace's own settings (issue 39 §4, issue 40 §5; spec/identity.md "Workspaces"): its
-- escalation SLAs and targets, and a request budget its tokens share. Null: the server's default
-- (BATON_ESCALATE_*; no shared budget). Expand only: new nullable columns the previous release never reads.
ALTER TABLE workspaces
  ADD COLUMN escalate_ask_s integer CHECK (escalate_ask_s >= 0),
  ADD COLUMN escalate_approval_s integer CHECK (escalate_approval_s >= 0),
  ADD COLUMN escalate_review_s integer CHECK (escalate_review_s >= 0),
  ADD COLUMN escalate_to text[],
  -- Requests per BATON_RATE_LIMIT window, all its tokens together, counted in rate_counters under the workspace's id.
  ADD COLUMN rate_limit integer CHECK (rate_limit > 0);
