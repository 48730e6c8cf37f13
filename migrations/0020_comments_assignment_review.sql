-- Humans and agents working together (issue 25): comments on tasks, an assignee per task, and
-- review with feedback (the hand-in an agent leaves for its reviewer, the change request it gets back).

CREATE TABLE comments (
  id              text PRIMARY KEY,
  task_id         text NOT NULL REFERENCES tasks (id),
  -- Markdown; '' once deleted (the row stays as a tombstone so the thread keeps its place).
  body            text NOT NULL,
  -- Artifact ids the comment refers to (never the bytes).
  artifacts       text[] NOT NULL DEFAULT '{}',
  -- The principals the body mentions, resolved when it was written.
  mentions        text[] NOT NULL DEFAULT '{}',
  author_id       text NOT NULL,
  author_kind     text NOT NULL CHECK (author_kind IN ('human', 'agent')),
  version         integer NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  deleted_at      timestamptz,
  deleted_by_id   text
);
-- A task's thread, oldest first (ids are ULIDs); and the latest human comments for a claim.
CREATE INDEX comments_task_id ON comments (task_id, id);

ALTER TABLE tasks
  ADD COLUMN assignee_id text REFERENCES agents (id),
  ADD COLUMN assignee_kind text CHECK (assignee_kind IN ('human', 'agent')),
  -- The last hand-in for review: {summary, artifacts, by: {id, kind}, at}.
  ADD COLUMN handoff jsonb,
  -- The reviewer's change request the assignee has not yet answered with a new hand-in.
  ADD COLUMN changes_requested_id text REFERENCES comments (id);

CREATE INDEX tasks_assignee ON tasks (assignee_id, id) WHERE assignee_id IS NOT NULL;
