-- Templates (issue 42 §3): a parametrised task graph, instantiated in one transaction. `parameters`
-- and `tasks` are the validated definition as templates_create took it (spec/templates.md); the
-- tasks an instantiation makes are ordinary tasks, so nothing else refers to a template.
CREATE TABLE templates (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text NOT NULL,
  parameters jsonb NOT NULL,
  tasks jsonb NOT NULL,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamptz,
  created_at timestamptz NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamptz NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL
);
