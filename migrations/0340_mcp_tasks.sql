-- MCP Tasks (issue 38 §8, spec/mcp.md "MCP Tasks"): the durable handle a tool call that would wait
-- answers with, for a host that declared the extension (io.modelcontextprotocol/tasks, 2026-07-28).
-- A handle is a row, not a process: nothing runs between two polls. Each `tasks/get` looks once,
-- as the caller, at what the call waits for (the wait's events, the ask, the approval) and settles
-- the row when it has come, so any instance answers any poll. Rows go once `expires_at` passes.
-- Expand only: a new table; a release before this one never reads it.
CREATE TABLE mcp_tasks (
  id text PRIMARY KEY,
  workspace_id text NOT NULL DEFAULT coalesce(nullif(current_setting('baton.workspace', true), ''), 'wsp_00000000000000000000000000'),
  principal_id text NOT NULL,
  -- The tool (an operation's name) and the input a poll calls it with; `follows` says what it waits for.
  tool text NOT NULL,
  input jsonb NOT NULL,
  follows text NOT NULL CHECK (follows IN ('wait', 'approval')),
  status text NOT NULL DEFAULT 'working' CHECK (status IN ('working', 'completed', 'failed', 'cancelled')),
  -- The tool call's result (a CallToolResult) once completed; the JSON-RPC error once failed.
  result jsonb,
  -- The end of the call's own wait (`follows = 'wait'`): then it completes with what it has.
  wait_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX mcp_tasks_expires ON mcp_tasks (expires_at);
ALTER TABLE mcp_tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON mcp_tasks
  USING (workspace_id = current_setting('baton.workspace', true))
  WITH CHECK (workspace_id = current_setting('baton.workspace', true));
