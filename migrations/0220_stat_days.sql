-- Insight (issue 41 §3): per-day rollups that `stats_get` sums over a window instead of scanning
-- tasks, leases or events. Triggers keep them in the writing transaction, so every path that changes
-- a task's status, ends a lease or adds usage (some of them single statements that also append
-- events) counts exactly once, and a write that rolls back leaves no count behind. Expand only: the
-- previous release's writes fire the same triggers.

-- One row per UTC day, dimension (`all`; `agent`: a principal id; `label`), metric and shard. A
-- counter metric adds 1 to `n` and its amount to `total`; a duration metric also adds 1 to its
-- bucket, one column each (b01 … b21, edges in baton_stat_bucket), so a reader sums plain columns. The `all` rows are spread over 4 shards by
-- transaction id, so concurrent writers rarely wait on one row; readers sum the shards.
CREATE TABLE stat_days (
  day date NOT NULL,
  dim text NOT NULL CHECK (dim IN ('all', 'agent', 'label')),
  key text NOT NULL,
  metric text NOT NULL,
  shard smallint NOT NULL,
  n bigint NOT NULL DEFAULT 0,
  total bigint NOT NULL DEFAULT 0,
  b01 integer NOT NULL DEFAULT 0,
  b02 integer NOT NULL DEFAULT 0,
  b03 integer NOT NULL DEFAULT 0,
  b04 integer NOT NULL DEFAULT 0,
  b05 integer NOT NULL DEFAULT 0,
  b06 integer NOT NULL DEFAULT 0,
  b07 integer NOT NULL DEFAULT 0,
  b08 integer NOT NULL DEFAULT 0,
  b09 integer NOT NULL DEFAULT 0,
  b10 integer NOT NULL DEFAULT 0,
  b11 integer NOT NULL DEFAULT 0,
  b12 integer NOT NULL DEFAULT 0,
  b13 integer NOT NULL DEFAULT 0,
  b14 integer NOT NULL DEFAULT 0,
  b15 integer NOT NULL DEFAULT 0,
  b16 integer NOT NULL DEFAULT 0,
  b17 integer NOT NULL DEFAULT 0,
  b18 integer NOT NULL DEFAULT 0,
  b19 integer NOT NULL DEFAULT 0,
  b20 integer NOT NULL DEFAULT 0,
  b21 integer NOT NULL DEFAULT 0,
  PRIMARY KEY (dim, day, key, metric, shard)
);

-- What the rollups need to know about a task between two of its status changes: since when it has
-- its status, when it first went in progress, who last held it, whether its first review is decided.
-- Tasks created before this migration get a row at their next status change (that change's
-- time-in-status is not counted: its start is unknown).
CREATE TABLE task_flow (
  task_id text PRIMARY KEY,
  status_since timestamptz NOT NULL,
  started_at timestamptz,
  holder_id text,
  reviewed boolean NOT NULL DEFAULT false
);

-- Duration buckets, in seconds: bucket i holds [edge i, edge i+1); the last is open (90 days and
-- more). Mirrored by DURATION_EDGES_S in src/store/stat-days.ts.
CREATE FUNCTION baton_stat_bucket(seconds double precision) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT width_bucket(seconds, ARRAY[0, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 43200,
    86400, 172800, 259200, 432000, 604800, 1209600, 2592000, 5184000, 7776000]::double precision[])
$$;

-- Adds one count to the day's rows (a counter adds `amount` to the total; a duration adds its whole
-- seconds to the total and 1 to its bucket; `amount` is then unused)
-- for everyone, for the agent (when known) and for each distinct label. Rows are
-- inserted in key order, so two writers lock shared rows in the same order within one call.
CREATE FUNCTION baton_stat_add(p_day date, p_agent text, p_labels text[], p_metric text, p_amount bigint, p_seconds double precision)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_b integer := CASE WHEN p_seconds IS NULL THEN 0 ELSE baton_stat_bucket(greatest(p_seconds, 0)) END;
  v_total bigint := CASE WHEN p_seconds IS NULL THEN p_amount ELSE greatest(round(p_seconds), 0)::bigint END;
  v_shard smallint := (pg_current_xact_id()::text::bigint % 4)::smallint;
BEGIN
  INSERT INTO stat_days AS s (day, dim, key, metric, shard, n, total, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16, b17, b18, b19, b20, b21)
  SELECT p_day, d.dim, d.key, p_metric, CASE WHEN d.dim = 'all' THEN v_shard ELSE 0 END, 1, v_total,
    (v_b = 1)::int, (v_b = 2)::int, (v_b = 3)::int, (v_b = 4)::int, (v_b = 5)::int, (v_b = 6)::int, (v_b = 7)::int, (v_b = 8)::int, (v_b = 9)::int, (v_b = 10)::int, (v_b = 11)::int, (v_b = 12)::int, (v_b = 13)::int, (v_b = 14)::int, (v_b = 15)::int, (v_b = 16)::int, (v_b = 17)::int, (v_b = 18)::int, (v_b = 19)::int, (v_b = 20)::int, (v_b = 21)::int
  FROM (SELECT 'all' AS dim, '' AS key UNION ALL SELECT 'agent', p_agent WHERE p_agent IS NOT NULL
        UNION ALL SELECT DISTINCT 'label', l FROM unnest(p_labels) AS l) AS d
  ORDER BY d.dim, d.key
  ON CONFLICT (dim, day, key, metric, shard) DO UPDATE SET n = s.n + 1, total = s.total + excluded.total,
    b01 = s.b01 + excluded.b01, b02 = s.b02 + excluded.b02, b03 = s.b03 + excluded.b03, b04 = s.b04 + excluded.b04, b05 = s.b05 + excluded.b05, b06 = s.b06 + excluded.b06, b07 = s.b07 + excluded.b07, b08 = s.b08 + excluded.b08, b09 = s.b09 + excluded.b09, b10 = s.b10 + excluded.b10, b11 = s.b11 + excluded.b11, b12 = s.b12 + excluded.b12, b13 = s.b13 + excluded.b13, b14 = s.b14 + excluded.b14, b15 = s.b15 + excluded.b15, b16 = s.b16 + excluded.b16, b17 = s.b17 + excluded.b17, b18 = s.b18 + excluded.b18, b19 = s.b19 + excluded.b19, b20 = s.b20 + excluded.b20, b21 = s.b21 + excluded.b21;
END
$$;

CREATE FUNCTION baton_utc_day(ts timestamptz) RETURNS date LANGUAGE sql IMMUTABLE AS $$ SELECT (ts AT TIME ZONE 'UTC')::date $$;

-- A task's status change (at its `updated_at`, the write's time): the time spent in the status it
-- leaves; review wait and the first review's outcome; on `done`, throughput, cycle and lead time.
-- A failed attempt (attempts up by one) counts under its failure's code (or kind).
CREATE FUNCTION baton_stat_task() RETURNS trigger LANGUAGE plpgsql AS $$
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
    PERFORM baton_stat_add(d, agent, NEW.labels, 'fail:' || coalesce(failure ->> 'code', failure ->> 'kind', 'unknown'), 1, NULL);
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
CREATE TRIGGER tasks_stat_insert AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION baton_stat_task();
CREATE TRIGGER tasks_stat_update AFTER UPDATE OF status, attempts ON tasks
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR NEW.attempts > OLD.attempts)
  EXECUTE FUNCTION baton_stat_task();

-- A run's end (its lease leaves `active`): one run, and how long it lasted.
CREATE FUNCTION baton_stat_lease() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ended timestamptz := CASE WHEN NEW.state = 'expired' THEN NEW.expires_at ELSE coalesce(NEW.ended_at, NEW.expires_at) END;
BEGIN
  PERFORM baton_stat_add(baton_utc_day(ended), NEW.holder_id, (SELECT labels FROM tasks WHERE id = NEW.task_id), 'runs', 1,
    extract(epoch FROM ended - NEW.acquired_at));
  RETURN NULL;
END
$$;
CREATE TRIGGER leases_stat_end AFTER UPDATE OF state ON leases
  FOR EACH ROW WHEN (OLD.state = 'active' AND NEW.state <> 'active')
  EXECUTE FUNCTION baton_stat_lease();

-- A usage report (runs_usage, or usage on a heartbeat): what it added, on the day it was reported.
CREATE FUNCTION baton_stat_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d date := baton_utc_day(NEW.updated_at);
  holder text;
  lbl text[];
  di bigint := NEW.input_tokens - CASE WHEN TG_OP = 'UPDATE' THEN OLD.input_tokens ELSE 0 END;
  dout bigint := NEW.output_tokens - CASE WHEN TG_OP = 'UPDATE' THEN OLD.output_tokens ELSE 0 END;
  dc bigint := NEW.cost_micros - CASE WHEN TG_OP = 'UPDATE' THEN OLD.cost_micros ELSE 0 END;
  dt bigint := NEW.tool_calls - CASE WHEN TG_OP = 'UPDATE' THEN OLD.tool_calls ELSE 0 END;
BEGIN
  IF di = 0 AND dout = 0 AND dc = 0 AND dt = 0 THEN
    RETURN NULL;
  END IF;
  SELECT l.holder_id, t.labels INTO holder, lbl FROM leases l JOIN tasks t ON t.id = l.task_id WHERE l.id = NEW.lease_id;
  IF di > 0 THEN PERFORM baton_stat_add(d, holder, lbl, 'input_tokens', di, NULL); END IF;
  IF dout > 0 THEN PERFORM baton_stat_add(d, holder, lbl, 'output_tokens', dout, NULL); END IF;
  IF dt > 0 THEN PERFORM baton_stat_add(d, holder, lbl, 'tool_calls', dt, NULL); END IF;
  IF dc > 0 THEN PERFORM baton_stat_add(d, holder, lbl, 'cost:' || coalesce(NEW.currency, 'USD'), dc, NULL); END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER runs_stat_usage AFTER INSERT OR UPDATE OF input_tokens, output_tokens, cost_micros, tool_calls ON runs
  FOR EACH ROW EXECUTE FUNCTION baton_stat_usage();
