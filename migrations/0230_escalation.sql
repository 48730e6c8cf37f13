-- Escalation and SLAs (issue 40 §5, spec/asks.md "Escalation"). Expand only: nullable columns and
-- a wider CHECK. The previous release lists an `approval` or `overdue` inbox item as it lists any
-- other (it maps rows without checking their kind) and never writes one.

-- tasks first: a serving instance's writes lock tasks before the tables their triggers reach (asks,
-- approvals, inbox_items), so taking them in the same order cannot deadlock with those writes.
-- A task's review: overdue while it is in review and this is later than its hand-in (handoff.at),
-- so a task handed in again starts a new wait without anything resetting the mark.
ALTER TABLE tasks ADD COLUMN review_overdue_at timestamptz;
-- How many of the task's open asks are overdue, kept beside open_asks (the board reads it). The
-- previous release does not decrement it when it closes an overdue ask during a rolling deploy; the
-- task shows it only while open_asks > 0, so such a leftover shows at most beside a later open ask.
ALTER TABLE tasks ADD COLUMN overdue_asks integer NOT NULL DEFAULT 0;
-- When the escalation pass found it waiting past its SLA (BATON_ESCALATE_*_S) and notified the
-- escalation target; set once, by whichever instance marks the row first.
ALTER TABLE asks ADD COLUMN overdue_at timestamptz;
ALTER TABLE approvals ADD COLUMN overdue_at timestamptz;
-- An inbox item whose ask, approval or review is overdue (the addressee's, and the target's own).
ALTER TABLE inbox_items ADD COLUMN overdue_at timestamptz;
-- approval: an approval of a task's operation, for each human who may decide it; overdue: a wait
-- past its SLA, for its escalation target.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check CHECK (kind IN ('ask', 'answer', 'mention', 'review', 'assigned', 'approval', 'overdue'));
-- What the escalation pass reads: open asks and pending approvals not yet marked, oldest first.
CREATE INDEX asks_open_unmarked ON asks (created_at) WHERE status = 'open' AND overdue_at IS NULL;
CREATE INDEX approvals_pending_unmarked ON approvals (created_at) WHERE status = 'pending' AND overdue_at IS NULL;
