-- Failure codes (issue 41 §1, spec/runs.md "Failure codes") and a task's max_cost (§2, spec/runs.md
-- "Budgets"). Expand only: nullable columns or columns with a default, an index, and the rollup
-- functions replaced (the previous release's writes fire them too).

-- Why a run failed: set with the lease's end (a failed release, a lapse, a cancel); null otherwise.
ALTER TABLE leases ADD COLUMN failure_code text;

-- A task's max_cost, as the task shows it: micro-units of its currency. It is enforced by the task
-- budget it made (`task_max_cost`, one per task), which budgets_update and budgets_delete keep in step.
ALTER TABLE tasks ADD COLUMN max_cost_micros bigint, ADD COLUMN max_cost_currency text;
ALTER TABLE budgets ADD COLUMN task_max_cost boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX budgets_task_max_cost ON budgets (target) WHERE task_max_cost AND deleted_at IS NULL;

-- A task's status change, as in 0220; a failed attempt (attempts up by one) now counts under its
-- failure's code, and a failure recorded without one (by the previous release) under the code its
-- kind stands for: `lapsed` for an expiry, `unspecified` for a failed release.
CREATE OR REPLACE FUNCTION baton_stat_task() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  f task_flow%ROWTYPE;
  known boolean;
  v_at timestamptz := NEW.updated_at;
  d date := baton_utc_day(NEW.updated_at);
  agent text;
  failure jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO task_flow (task_id, status_since, holder_id) VALUES (NEW.id, NEW.created_at, NEW.lease_holder_id) ON CONFLICT DO NOTHING;
    RETURN NULL;
  END IF;
  SELECT * INTO f FROM task_flow WHERE task_id = NEW.id;
  known := FOUND;
  agent := coalesce(NEW.lease_holder_id, OLD.lease_holder_id, f.holder_id);
  IF NEW.attempts > OLD.attempts THEN
    failure := NEW.failures -> -1;
    PERFORM baton_stat_add(d, agent, NEW.labels, 'fail:' || coalesce(failure ->> 'code', CASE failure ->> 'kind' WHEN 'expired' THEN 'lapsed' ELSE 'unspecified' END), 1, NULL);
  END IF;
  IF NEW.status IS NOT DISTINCT FROM OLD.status THEN
    RETURN NULL;
  END IF;
  IF known THEN
    PERFORM baton_stat_add(d, agent, NEW.labels, 'in:' || OLD.status, 0, extract(epoch FROM v_at - f.status_since));
  END IF;
  IF OLD.status = 'in_review' AND NEW.status IN ('done', 'in_progress') AND known THEN
    PERFORM baton_stat_add(d, agent, NEW.labels, 'review_wait', 0, extract(epoch FROM v_at - f.status_since));
    IF NOT f.reviewed THEN
      PERFORM baton_stat_add(d, agent, NEW.labels, 'first_review', 1, NULL);
      IF NEW.status = 'done' THEN
        PERFORM baton_stat_add(d, agent, NEW.labels, 'first_pass', 1, NULL);
      END IF;
    END IF;
  END IF;
  IF NEW.status = 'done' THEN
    PERFORM baton_stat_add(d, agent, NEW.labels, 'done', 1, NULL);
    PERFORM baton_stat_add(d, agent, NEW.labels, 'lead', 0, extract(epoch FROM v_at - NEW.created_at));
    IF f.started_at IS NOT NULL THEN
      PERFORM baton_stat_add(d, agent, NEW.labels, 'cycle', 0, extract(epoch FROM v_at - f.started_at));
    END IF;
  END IF;
  INSERT INTO task_flow (task_id, status_since, started_at, holder_id, reviewed)
  VALUES (NEW.id, v_at, CASE WHEN NEW.status = 'in_progress' THEN v_at END, agent,
          OLD.status = 'in_review' AND NEW.status IN ('done', 'in_progress'))
  ON CONFLICT (task_id) DO UPDATE SET
    status_since = excluded.status_since,
    started_at = coalesce(task_flow.started_at, excluded.started_at),
    holder_id = excluded.holder_id,
    reviewed = task_flow.reviewed OR excluded.reviewed;
  RETURN NULL;
END
$$;

-- A run's end, as in 0220; a run ended by someone else's change (a cancel, a delete) with a failure
-- code also counts as a failure under it. A failed release and a lapse count at their task (its
-- attempts go up), so they are not counted here again.
CREATE OR REPLACE FUNCTION baton_stat_lease() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ended timestamptz := CASE WHEN NEW.state = 'expired' THEN NEW.expires_at ELSE coalesce(NEW.ended_at, NEW.expires_at) END;
  lbl text[] := (SELECT labels FROM tasks WHERE id = NEW.task_id);
BEGIN
  PERFORM baton_stat_add(baton_utc_day(ended), NEW.holder_id, lbl, 'runs', 1, extract(epoch FROM ended - NEW.acquired_at));
  IF NEW.state = 'ended' AND NEW.failure_code IS NOT NULL THEN
    PERFORM baton_stat_add(baton_utc_day(ended), NEW.holder_id, lbl, 'fail:' || NEW.failure_code, 1, NULL);
  END IF;
  RETURN NULL;
END
$$;
