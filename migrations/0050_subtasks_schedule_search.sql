-- Subtasks, scheduling and search (issue 25 §5, §6). `not_before` (0021) is reused for schedules:
-- one column says when a task becomes claimable, whether a person scheduled it or a back-off did.

ALTER TABLE tasks
  -- The parent task; any depth up to 8 levels, never a cycle (checked by the service under a lock).
  ADD COLUMN parent_id text REFERENCES tasks (id),
  ADD COLUMN due_at timestamptz,
  -- When the maintenance pass wrote this due date's one `task.overdue` event; cleared when due_at changes.
  ADD COLUMN overdue_at timestamptz,
  -- Title (weight A) and description (weight B), for `q=`; comments have their own document.
  ADD COLUMN search_doc tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', description), 'B')) STORED;

-- A parent's children and their counts by status.
CREATE INDEX tasks_parent ON tasks (parent_id, status) WHERE parent_id IS NOT NULL;
-- The overdue pass: open tasks with a due date whose event is not written yet (closed ones
-- leave the index, so the pass never rereads them; the predicate is the pass's own filter).
CREATE INDEX tasks_due ON tasks (due_at)
  WHERE due_at IS NOT NULL AND overdue_at IS NULL AND deleted_at IS NULL AND status NOT IN ('done', 'cancelled');
CREATE INDEX tasks_search ON tasks USING gin (search_doc);

ALTER TABLE comments
  ADD COLUMN search_doc tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED;
CREATE INDEX comments_search ON comments USING gin (search_doc);
