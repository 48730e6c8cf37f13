-- Failure codes (issue 41 §1, spec/runs.md "Failure codes") and a task's max_cost (§2, spec/runs.md
-- "Budgets"). Expand only: nullable columns or columns with a default, an index, and the rollup
-- functions replaced (the previous release's writes fire them too).

-- A task's max_cost, as the task shows it: micro-units of its currency. It is enforced by the task
-- budget it made (`task_max_cost`, one per task), which budgets_update and budgets_delete keep in step.
ALTER TABLE tasks ADD COLUMN max_cost_micros bigint, ADD COLUMN max_cost_currency text;

-- Why a run failed, recorded when it ended (a failed release, a cancel; a lapse is read from its
-- lease). On `runs`, not `leases`: the previous release reads leases with `SELECT *` in prepared
-- statements, which a new column would make fail once on every connection.
ALTER TABLE runs ADD COLUMN failure_code text;

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

-- A run ended by someone else's change (a cancel, a delete) counts as a failure under its code, on
-- the day its lease ended. A failed release and a lapse count at their task (its attempts go up), so
-- they are not counted here again. The code is recorded after the lease's end, in its own statement.
CREATE FUNCTION baton_stat_run_failure() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.failure_code IS DISTINCT FROM 'cancelled' OR (TG_OP = 'UPDATE' AND OLD.failure_code IS NOT DISTINCT FROM NEW.failure_code) THEN
    RETURN NULL;
  END IF;
  PERFORM baton_stat_add(baton_utc_day(coalesce(l.ended_at, l.expires_at)), l.holder_id, t.labels, 'fail:cancelled', 1, NULL)
  FROM leases l JOIN tasks t ON t.id = l.task_id WHERE l.id = NEW.lease_id;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_stat_failure AFTER INSERT OR UPDATE OF failure_code ON runs
  FOR EACH ROW EXECUTE FUNCTION baton_stat_run_failure();
