-- Humans in the loop (issue 40 §1-3): questions on a task with a deadline and a default answer,
-- and each principal's inbox of what waits on it.

CREATE TABLE asks (
  id              text PRIMARY KEY,
  task_id         text NOT NULL REFERENCES tasks (id),
  question        text NOT NULL,
  -- [{label, value?}]; empty for a free-text question.
  options         jsonb NOT NULL DEFAULT '[]',
  -- Who is asked now. A role target may come later (a second nullable column), so no NOT NULL
  -- beyond this one is assumed about the addressee.
  to_id           text NOT NULL REFERENCES agents (id),
  -- Everyone the ask goes to, in order: the first addressee, then whoever is asked as each deadline
  -- passes unanswered; the default applies after the last one's deadline. to_id = chain[step + 1].
  chain           text[] NOT NULL,
  -- How many deadlines have passed (escalations so far).
  step            integer NOT NULL DEFAULT 0,
  -- Seconds each escalated addressee gets.
  timeout_s       integer NOT NULL,
  due_at          timestamptz NOT NULL,
  default_answer  jsonb NOT NULL,
  asked_by_id     text NOT NULL,
  asked_by_kind   text NOT NULL CHECK (asked_by_kind IN ('human', 'agent')),
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'defaulted', 'cancelled')),
  -- {text, value?, option?}: what was answered, or the default once it applied.
  answer          jsonb,
  answered_by_id  text,
  answered_by_kind text CHECK (answered_by_kind IN ('human', 'agent', 'system')),
  answered_at     timestamptz,
  created_at      timestamptz NOT NULL
);
CREATE INDEX asks_task ON asks (task_id, id);
-- The maintenance worker's scan: open asks by deadline.
CREATE INDEX asks_open_due ON asks (due_at) WHERE status = 'open';
CREATE INDEX asks_open_to ON asks (to_id, id) WHERE status = 'open';

-- One row per thing that waits on a principal, written in the transaction of the event that caused it.
CREATE TABLE inbox_items (
  id              text PRIMARY KEY,
  principal_id    text NOT NULL REFERENCES agents (id),
  -- ask: asked of you; answer: your ask was answered; mention: @you; review: a decision on your
  -- hand-in; assigned: a task was assigned to you.
  kind            text NOT NULL CHECK (kind IN ('ask', 'answer', 'mention', 'review', 'assigned')),
  task_id         text NOT NULL,
  -- The ask, comment or task the item is about.
  ref_id          text NOT NULL,
  by_id           text NOT NULL,
  excerpt         text NOT NULL DEFAULT '',
  state           text NOT NULL DEFAULT 'unread' CHECK (state IN ('unread', 'read', 'done')),
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL
);
-- A principal's inbox, newest first, by state (the unread count reads it too).
CREATE INDEX inbox_items_principal ON inbox_items (principal_id, state, id);

-- How many asks on the task wait for an answer: the task view and the board say it waits on a
-- human. Kept in the transactions that open and close asks, so reading a task joins nothing.
ALTER TABLE tasks ADD COLUMN open_asks integer NOT NULL DEFAULT 0;
