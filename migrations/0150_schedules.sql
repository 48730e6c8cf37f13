-- Recurring work (issue 42 §2): a schedule creates a task from its template on a cron expression in a
-- time zone. `next_run_at` is the first occurrence not yet handled; a pass moves it forward with a
-- compare-and-set, and each occurrence's task is created under an idempotency key of its own, so an
-- occurrence makes exactly one task across instances and restarts.
CREATE TABLE schedules (
  id text PRIMARY KEY,
  name text NOT NULL,
  cron text NOT NULL,
  time_zone text NOT NULL,
  task jsonb NOT NULL,
  overlap text NOT NULL CHECK (overlap IN ('skip', 'coalesce', 'always')),
  catch_up integer NOT NULL CHECK (catch_up BETWEEN 0 AND 100),
  enabled boolean NOT NULL,
  next_run_at timestamptz,
  held_at timestamptz,
  last_run_at timestamptz,
  last_task_id text,
  owner_token_id text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamptz NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL
);

CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled AND deleted_at IS NULL;
