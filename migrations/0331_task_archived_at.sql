-- Archived tasks (issue 43 §8, spec/api.md "Archive"): a finished task set aside, out of lists by
-- default. Expand only: a new nullable column and a partial index. A release before this one never
-- reads the column; a reopen it makes of an archived task leaves the mark set (this release clears
-- it on a reopen, and lists it with archived=any meanwhile).
ALTER TABLE tasks ADD COLUMN archived_at timestamptz;

-- `archived=only` lists read the archived tasks off this index (most tasks are not archived); the
-- default list reads the primary key as before and passes over the archived ones.
CREATE INDEX tasks_archived ON tasks (id) WHERE archived_at IS NOT NULL;
