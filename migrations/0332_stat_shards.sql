-- Daily figures under a fleet (issue 44 §1): every claim and hand-in adds to the workspace's `all`
-- rows of the day, and to each of the task's labels' rows, inside its transaction (baton_stat_add,
-- from the tasks' and leases' triggers), and holds those rows until it commits. A label's rows had
-- one shard and `all` four: a fleet working one label's queue waited row by row on them (`Lock:
-- transactionid` on the grant, bench/README.md "Fleet"). Both now spread over 16 shards by
-- transaction id; an agent's rows stay one (its own calls rarely overlap). Readers sum the shards,
-- whatever their number, so rows already written stay as they are.
-- Expand only: a function replaced; a release before this one reads the same rows.
CREATE OR REPLACE FUNCTION baton_stat_add(p_day date, p_agent text, p_labels text[], p_metric text, p_amount bigint, p_seconds double precision)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_b integer := CASE WHEN p_seconds IS NULL THEN 0 ELSE baton_stat_bucket(greatest(p_seconds, 0)) END;
  v_total bigint := CASE WHEN p_seconds IS NULL THEN p_amount ELSE greatest(round(p_seconds), 0)::bigint END;
  v_shard smallint := (pg_current_xact_id()::text::bigint % 16)::smallint;
BEGIN
  INSERT INTO stat_days AS s (day, dim, key, metric, shard, n, total, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16, b17, b18, b19, b20, b21)
  SELECT p_day, d.dim, d.key, p_metric, CASE WHEN d.dim = 'agent' THEN 0 ELSE v_shard END, 1, v_total,
    (v_b = 1)::int, (v_b = 2)::int, (v_b = 3)::int, (v_b = 4)::int, (v_b = 5)::int, (v_b = 6)::int, (v_b = 7)::int, (v_b = 8)::int, (v_b = 9)::int, (v_b = 10)::int, (v_b = 11)::int, (v_b = 12)::int, (v_b = 13)::int, (v_b = 14)::int, (v_b = 15)::int, (v_b = 16)::int, (v_b = 17)::int, (v_b = 18)::int, (v_b = 19)::int, (v_b = 20)::int, (v_b = 21)::int
  FROM (SELECT 'all' AS dim, '' AS key UNION ALL SELECT 'agent', p_agent WHERE p_agent IS NOT NULL
        UNION ALL SELECT DISTINCT 'label', l FROM unnest(p_labels) AS l) AS d
  ORDER BY d.dim, d.key
  ON CONFLICT (workspace_id, dim, day, key, metric, shard) DO UPDATE SET n = s.n + 1, total = s.total + excluded.total,
    b01 = s.b01 + excluded.b01, b02 = s.b02 + excluded.b02, b03 = s.b03 + excluded.b03, b04 = s.b04 + excluded.b04, b05 = s.b05 + excluded.b05, b06 = s.b06 + excluded.b06, b07 = s.b07 + excluded.b07, b08 = s.b08 + excluded.b08, b09 = s.b09 + excluded.b09, b10 = s.b10 + excluded.b10, b11 = s.b11 + excluded.b11, b12 = s.b12 + excluded.b12, b13 = s.b13 + excluded.b13, b14 = s.b14 + excluded.b14, b15 = s.b15 + excluded.b15, b16 = s.b16 + excluded.b16, b17 = s.b17 + excluded.b17, b18 = s.b18 + excluded.b18, b19 = s.b19 + excluded.b19, b20 = s.b20 + excluded.b20, b21 = s.b21 + excluded.b21;
END
$$;
