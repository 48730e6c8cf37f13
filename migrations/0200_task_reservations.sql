-- Reservations a task requires (issue 42 §1): claiming the task takes them with its lease, or does
-- not claim it. `requirements` is the list given on tasks_create/tasks_update, each
-- `{resource} | {repo, paths}` with a `mode`. A reservation so taken `follows_lease`: it has no TTL
-- of its own and lives exactly as long as its lease. Expand-only: a new table, a column with a default.
CREATE TABLE task_reservations (
  task_id text PRIMARY KEY,
  requirements jsonb NOT NULL
);

ALTER TABLE reservations ADD COLUMN follows_lease boolean NOT NULL DEFAULT false;
