-- Workspaces (issue 39 §4, spec/identity.md "Workspaces"). Every row a workspace owns carries its
-- `workspace_id`; PostgreSQL's row-level security keeps each workspace's rows from the others'.
--
-- How it holds: the service runs each operation in a transaction that first says whose it is,
-- `set_config('role', 'baton_tenant', true), set_config('baton.workspace', <id>, true)`. As
-- `baton_tenant` (not the tables' owner) every statement sees, changes and inserts only rows of
-- that workspace, whatever the store code says. The owner (the service's own work across
-- workspaces: sign-in, workers, migrations) is not bound, as PostgreSQL lets table owners be.
--
-- Expand only: a row written without a workspace (by the previous release, which knows only one)
-- goes to the default workspace, the one every existing row moves into here.

-- Every table this migration alters, locked at once before anything else, in the order a serving
-- instance's statements take them: a write's transaction starts on idempotency_keys, so once this
-- holds it no write is half way through; a request's authentication reads tokens, then agents. A
-- serving instance's requests then wait for this migration (bounded by their lock timeout) rather
-- than deadlock with it half way through its tables.
LOCK TABLE idempotency_keys, tokens, agents, tasks, leases, runs, run_log, events, task_flow, stat_days, task_search,
  comments, artifacts, artifact_contents, approvals, asks, inbox_items, notifications, notification_preferences,
  reservations, task_reservations, budgets, budget_spend, schedules, templates, sessions, oidc_identities,
  webhooks, webhook_deliveries IN ACCESS EXCLUSIVE MODE;

CREATE TABLE workspaces (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  created_by_id text NOT NULL
);
INSERT INTO workspaces (id, name, created_at, created_by_id) VALUES ('wsp_00000000000000000000000000', 'default', now(), 'system');

-- The role operations run as. One per cluster (roles are), so it may exist already.
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'baton_tenant') THEN
    BEGIN
      CREATE ROLE baton_tenant NOLOGIN;
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL; -- another database's migration made it meanwhile
      WHEN insufficient_privilege THEN
        RAISE EXCEPTION 'Baton needs the database role baton_tenant, and % may not create roles', current_user
          USING HINT = format('As a database administrator run: CREATE ROLE baton_tenant NOLOGIN; GRANT baton_tenant TO %I; then start Baton again (docs/operations.md, "Workspaces").', current_user);
    END;
  END IF;
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AND NOT pg_has_role(current_user, 'baton_tenant', 'MEMBER') THEN
    BEGIN
      EXECUTE format('GRANT baton_tenant TO %I', current_user);
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE EXCEPTION '% may not act as the database role baton_tenant', current_user
        USING HINT = format('As a database administrator run: GRANT baton_tenant TO %I; then start Baton again (docs/operations.md, "Workspaces").', current_user);
    END;
  END IF;
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO baton_tenant', current_schema());
  EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO baton_tenant', current_schema());
END
$roles$;

-- A workspace's rows: existing ones in the default workspace, new ones in the transaction's.
DO $scope$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[
    'agents', 'approvals', 'artifact_contents', 'artifacts', 'asks', 'budget_spend', 'budgets', 'comments',
    'events', 'idempotency_keys', 'inbox_items', 'leases', 'notification_preferences', 'notifications',
    'reservations', 'run_log', 'runs', 'schedules', 'sessions', 'stat_days', 'task_flow', 'task_reservations',
    'task_search', 'tasks', 'templates', 'tokens', 'webhook_deliveries', 'webhooks'
  ] LOOP
    EXECUTE format($ddl$
      ALTER TABLE %1$I ADD COLUMN workspace_id text NOT NULL
        DEFAULT coalesce(nullif(current_setting('baton.workspace', true), ''), 'wsp_00000000000000000000000000');
      ALTER TABLE %1$I ENABLE ROW LEVEL SECURITY;
      CREATE POLICY workspace_isolation ON %1$I
        USING (workspace_id = current_setting('baton.workspace', true))
        WITH CHECK (workspace_id = current_setting('baton.workspace', true));
    $ddl$, t);
  END LOOP;
END
$scope$;

-- A person (an OpenID identity) is a member of each workspace they hold a principal in.
ALTER TABLE oidc_identities ADD COLUMN workspace_id text NOT NULL DEFAULT 'wsp_00000000000000000000000000';
ALTER TABLE oidc_identities DROP CONSTRAINT oidc_identities_pkey, ADD PRIMARY KEY (issuer, subject, workspace_id);
ALTER TABLE oidc_identities ALTER COLUMN workspace_id DROP DEFAULT;
ALTER TABLE oidc_identities ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON oidc_identities
  USING (workspace_id = current_setting('baton.workspace', true))
  WITH CHECK (workspace_id = current_setting('baton.workspace', true));

-- The workspaces the transaction's principal (`baton.principal`) is a member of: theirs, and, for a
-- person, every other their identity is linked in. Read as the owner (SECURITY DEFINER), since the
-- other workspaces' rows are exactly what a bound transaction cannot see; it answers ids only.
DO $member$
BEGIN
  EXECUTE format($fn$
    CREATE FUNCTION baton_member_workspaces() RETURNS SETOF text LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I AS $body$
      SELECT current_setting('baton.workspace', true)
      UNION
      SELECT them.workspace_id FROM oidc_identities me
        JOIN oidc_identities them ON them.issuer = me.issuer AND them.subject = me.subject
        WHERE me.agent_id = current_setting('baton.principal', true)
    $body$
  $fn$, current_schema());
END
$member$;

-- A bound transaction sees its own workspace and the others its person belongs to (their names,
-- for a switcher); it changes or makes only its own.
ALTER TABLE workspaces ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_member_reads ON workspaces FOR SELECT USING (id IN (SELECT baton_member_workspaces()));
CREATE POLICY workspace_own_writes ON workspaces FOR ALL
  USING (id = current_setting('baton.workspace', true))
  WITH CHECK (id = current_setting('baton.workspace', true));

-- A workspace's daily figures are its own: the same label or day in two workspaces are two rows.
ALTER TABLE stat_days DROP CONSTRAINT stat_days_pkey, ADD PRIMARY KEY (workspace_id, dim, day, key, metric, shard);
CREATE OR REPLACE FUNCTION baton_stat_add(p_day date, p_agent text, p_labels text[], p_metric text, p_amount bigint, p_seconds double precision)
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
  ON CONFLICT (workspace_id, dim, day, key, metric, shard) DO UPDATE SET n = s.n + 1, total = s.total + excluded.total,
    b01 = s.b01 + excluded.b01, b02 = s.b02 + excluded.b02, b03 = s.b03 + excluded.b03, b04 = s.b04 + excluded.b04, b05 = s.b05 + excluded.b05, b06 = s.b06 + excluded.b06, b07 = s.b07 + excluded.b07, b08 = s.b08 + excluded.b08, b09 = s.b09 + excluded.b09, b10 = s.b10 + excluded.b10, b11 = s.b11 + excluded.b11, b12 = s.b12 + excluded.b12, b13 = s.b13 + excluded.b13, b14 = s.b14 + excluded.b14, b15 = s.b15 + excluded.b15, b16 = s.b16 + excluded.b16, b17 = s.b17 + excluded.b17, b18 = s.b18 + excluded.b18, b19 = s.b19 + excluded.b19, b20 = s.b20 + excluded.b20, b21 = s.b21 + excluded.b21;
END
$$;

-- A session ends `switched` when its person moves to another of their workspaces (a new session there).
ALTER TABLE sessions DROP CONSTRAINT sessions_end_reason_check,
  ADD CONSTRAINT sessions_end_reason_check CHECK (end_reason IN ('signed_out', 'revoked', 'idle', 'disabled', 'switched'));

-- A workspace's timeline read on its own: its latest event and its events after a cursor.
CREATE INDEX events_workspace_seq ON events (workspace_id, seq);

-- The ready queue and the status lists, one workspace's at a time: a claim in a small workspace
-- reads its own queue off the index, not past every other workspace's waiting tasks.
DROP INDEX tasks_queue;
CREATE INDEX tasks_queue ON tasks (workspace_id, priority DESC, id) WHERE status = 'todo';
DROP INDEX tasks_status_id;
CREATE INDEX tasks_status_id ON tasks (workspace_id, status, id);
