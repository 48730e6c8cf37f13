-- Retention per workspace (issue 39 §4; spec/identity.md "Retention"). Each workspace keeps its own
-- events for as long as it says (`event_retention_days`; null: the server's BATON_EVENT_RETENTION_DAYS,
-- unset: for ever), and archiving runs per workspace, so each workspace has its own archived range and
-- oldest cursor. Expand only: a new nullable column, and a column the previous release writes by default.
ALTER TABLE workspaces ADD COLUMN event_retention_days integer CHECK (event_retention_days > 0);

ALTER TABLE event_archives ADD COLUMN workspace_id text NOT NULL
  DEFAULT coalesce(nullif(current_setting('baton.workspace', true), ''), 'wsp_00000000000000000000000000');

-- A run before this release archived every workspace's events before its cutoff: each workspace's
-- cursors into that range are archived too, so each gets its own record of it.
INSERT INTO event_archives (through_seq, max_id, event_count, before, archived_at, file, workspace_id)
  SELECT a.through_seq, a.max_id, 0, a.before, a.archived_at, a.file, w.id
  FROM event_archives a CROSS JOIN workspaces w
  WHERE a.workspace_id = 'wsp_00000000000000000000000000' AND w.id <> a.workspace_id
  ORDER BY a.id, w.id;

ALTER TABLE event_archives ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON event_archives
  USING (workspace_id = current_setting('baton.workspace', true))
  WITH CHECK (workspace_id = current_setting('baton.workspace', true));
CREATE INDEX event_archives_workspace ON event_archives (workspace_id, id);
