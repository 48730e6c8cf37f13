-- Budget warnings in the inbox (issue 41 §2, spec/runs.md "Budgets"). Expand only: a wider CHECK.
-- The previous release (0.2.0) has no inbox; a later one lists a `budget` item as it lists any
-- other (it maps rows without checking their kind) and never writes one.
-- budget: a budget of a run reached 80 % or 100 % of its limit, for each human who may raise it.
ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_kind_check;
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check CHECK (kind IN ('ask', 'answer', 'mention', 'review', 'assigned', 'approval', 'overdue', 'budget'));
-- Open items by what they are about: closing them (an ask closed, an approval decided or expired, a
-- budget's newer item) reads only the open ones, not every item ever written.
CREATE INDEX inbox_items_open_ref ON inbox_items (kind, ref_id) WHERE state <> 'done';
