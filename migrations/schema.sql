-- The schema after every migration, read from the catalogue. Generated; do not edit.
-- Regenerate with: node test/store/schema-dump.ts

CREATE TABLE agents (
  id text NOT NULL,
  name text NOT NULL,
  kind text NOT NULL,
  scopes text[] NOT NULL,
  tool_allowlist text[],
  disabled boolean NOT NULL DEFAULT false,
  version integer NOT NULL DEFAULT 1,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL,
  rate_limit integer,
  external_id text,
  email text,
  external_updated_at timestamp with time zone,
  role text,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text),
  spelling text DEFAULT lower(replace(name, ' '::text, '_'::text))
);

CREATE TABLE approvals (
  id text NOT NULL,
  operation text NOT NULL,
  input jsonb NOT NULL,
  fingerprint bytea NOT NULL,
  target_id text,
  target_version integer,
  status text NOT NULL,
  requested_by_id text NOT NULL,
  requested_by_kind text NOT NULL,
  requested_token_id text NOT NULL,
  requested_machine text NOT NULL,
  requested_scopes text[] NOT NULL,
  idempotency_key text NOT NULL,
  decided_by_id text,
  decided_by_kind text,
  decided_at timestamp with time zone,
  reason text,
  result_status smallint,
  result_body text,
  expires_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  overdue_at timestamp with time zone,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE artifact_contents (
  artifact_id text NOT NULL,
  content bytea NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE artifacts (
  id text NOT NULL,
  task_id text,
  name text,
  content_type text NOT NULL,
  size_bytes integer NOT NULL,
  sha256 text NOT NULL,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE asks (
  id text NOT NULL,
  task_id text NOT NULL,
  question text NOT NULL,
  options jsonb NOT NULL DEFAULT '[]'::jsonb,
  to_id text,
  chain text[] NOT NULL,
  step integer NOT NULL DEFAULT 0,
  timeout_s integer NOT NULL,
  due_at timestamp with time zone NOT NULL,
  default_answer jsonb NOT NULL,
  asked_by_id text NOT NULL,
  asked_by_kind text NOT NULL,
  status text NOT NULL DEFAULT 'open'::text,
  answer jsonb,
  answered_by_id text,
  answered_by_kind text,
  answered_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  overdue_at timestamp with time zone,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text),
  to_role text
);

CREATE TABLE baton_migrations (
  name text NOT NULL,
  applied_at timestamp with time zone NOT NULL DEFAULT now(),
  checksum text,
  contract boolean NOT NULL DEFAULT false
);

CREATE TABLE billing_accounts (
  customer_id text NOT NULL,
  email text,
  checkout_session_id text,
  subscription_id text,
  subscription_status text,
  price_id text,
  last_invoice_id text,
  last_invoice_status text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL
);

CREATE TABLE budget_spend (
  budget_id text NOT NULL,
  window_start timestamp with time zone NOT NULL,
  amount bigint NOT NULL,
  at timestamp with time zone NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE budgets (
  id text NOT NULL,
  name text NOT NULL,
  applies_to text NOT NULL,
  target text NOT NULL,
  unit text NOT NULL,
  currency text,
  period text NOT NULL,
  limit_amount bigint NOT NULL,
  warned_for timestamp with time zone,
  exhausted_for timestamp with time zone,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL,
  task_max_cost boolean NOT NULL DEFAULT false,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE comments (
  id text NOT NULL,
  task_id text NOT NULL,
  body text NOT NULL,
  artifacts text[] NOT NULL DEFAULT '{}'::text[],
  mentions text[] NOT NULL DEFAULT '{}'::text[],
  author_id text NOT NULL,
  author_kind text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  deleted_at timestamp with time zone,
  deleted_by_id text,
  search_doc tsvector DEFAULT to_tsvector('english'::regconfig, body),
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE event_archives (
  id bigint NOT NULL,
  through_seq bigint NOT NULL,
  max_id text NOT NULL,
  event_count bigint NOT NULL,
  before timestamp with time zone NOT NULL,
  archived_at timestamp with time zone NOT NULL,
  file text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE events (
  seq bigint NOT NULL,
  id text NOT NULL,
  type text NOT NULL,
  subject text NOT NULL,
  actor_id text NOT NULL,
  actor_kind text NOT NULL,
  token_id text,
  machine text,
  idempotency_key text,
  data jsonb NOT NULL,
  created_at timestamp with time zone NOT NULL,
  approval_id text,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE idempotency_keys (
  principal_id text NOT NULL,
  key text NOT NULL,
  fingerprint bytea NOT NULL,
  operation text NOT NULL,
  status_code smallint NOT NULL,
  response_body text NOT NULL,
  created_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE inbound_deliveries (
  provider text NOT NULL,
  provider_event_id text NOT NULL,
  provider_type text NOT NULL,
  event_id text NOT NULL,
  received_at timestamp with time zone NOT NULL
);

CREATE TABLE inbox_items (
  id text NOT NULL,
  principal_id text NOT NULL,
  kind text NOT NULL,
  task_id text NOT NULL,
  ref_id text NOT NULL,
  by_id text NOT NULL,
  excerpt text NOT NULL DEFAULT ''::text,
  state text NOT NULL DEFAULT 'unread'::text,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  overdue_at timestamp with time zone,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE leases (
  id text NOT NULL,
  task_id text NOT NULL,
  holder_id text NOT NULL,
  holder_kind text NOT NULL,
  token_id text,
  machine text,
  epoch integer NOT NULL,
  ttl_s integer NOT NULL,
  state text NOT NULL,
  acquired_at timestamp with time zone NOT NULL,
  renewed_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  warned_at timestamp with time zone,
  ended_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text),
  warn_at timestamp with time zone
);

CREATE TABLE mcp_tasks (
  id text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text),
  principal_id text NOT NULL,
  tool text NOT NULL,
  input jsonb NOT NULL,
  follows text NOT NULL,
  status text NOT NULL DEFAULT 'working'::text,
  result jsonb,
  wait_until timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL
);

CREATE TABLE notification_links_used (
  link_id text NOT NULL,
  principal_id text NOT NULL,
  used_at timestamp with time zone NOT NULL
);

CREATE TABLE notification_preferences (
  principal_id text NOT NULL,
  email text NOT NULL DEFAULT 'immediate'::text,
  chat boolean NOT NULL DEFAULT true,
  updated_at timestamp with time zone NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE notifications (
  inbox_item_id text NOT NULL,
  channel text NOT NULL,
  principal_id text NOT NULL,
  digest boolean NOT NULL,
  state text NOT NULL DEFAULT 'pending'::text,
  attempt_count integer NOT NULL DEFAULT 0,
  attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
  next_attempt_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE oidc_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  agent_id text NOT NULL,
  email text,
  created_at timestamp with time zone NOT NULL,
  last_sign_in_at timestamp with time zone NOT NULL,
  workspace_id text NOT NULL
);

CREATE TABLE rate_counters (
  token_id text NOT NULL,
  window_start bigint NOT NULL,
  shard smallint NOT NULL,
  count integer NOT NULL
);

CREATE TABLE reservations (
  id text NOT NULL,
  lock_key text NOT NULL,
  resource text,
  repo text,
  paths text[],
  mode text NOT NULL,
  holder_id text NOT NULL,
  holder_kind text NOT NULL,
  task_id text,
  lease_id text,
  epoch integer NOT NULL,
  ttl_s integer NOT NULL,
  acquired_at timestamp with time zone NOT NULL,
  renewed_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  ended_at timestamp with time zone,
  end_reason text,
  follows_lease boolean NOT NULL DEFAULT false,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE run_log (
  lease_id text NOT NULL,
  seq integer NOT NULL,
  at timestamp with time zone NOT NULL,
  level text NOT NULL,
  line text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE runs (
  lease_id text NOT NULL,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  cost_micros bigint NOT NULL DEFAULT 0,
  currency text,
  model text,
  tool_calls bigint NOT NULL DEFAULT 0,
  reports integer NOT NULL DEFAULT 0,
  log_lines integer NOT NULL DEFAULT 0,
  updated_at timestamp with time zone NOT NULL,
  failure_code text,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE schedules (
  id text NOT NULL,
  name text NOT NULL,
  cron text NOT NULL,
  time_zone text NOT NULL,
  task jsonb,
  overlap text NOT NULL,
  catch_up integer NOT NULL,
  enabled boolean NOT NULL,
  next_run_at timestamp with time zone,
  held_at timestamp with time zone,
  last_run_at timestamp with time zone,
  last_task_id text,
  owner_token_id text NOT NULL,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL,
  template jsonb,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE server_keys (
  purpose text NOT NULL,
  key bytea NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
  id text NOT NULL,
  token_id text NOT NULL,
  agent_id text NOT NULL,
  user_agent text NOT NULL,
  issuer text,
  created_at timestamp with time zone NOT NULL,
  last_seen_at timestamp with time zone NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  ended_at timestamp with time zone,
  end_reason text,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text),
  provider_session_id text
);

CREATE TABLE stat_days (
  day date NOT NULL,
  dim text NOT NULL,
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
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE task_flow (
  task_id text NOT NULL,
  status_since timestamp with time zone NOT NULL,
  started_at timestamp with time zone,
  holder_id text,
  reviewed boolean NOT NULL DEFAULT false,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE task_reservations (
  task_id text NOT NULL,
  requirements jsonb NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE task_search (
  task_id text NOT NULL,
  search_doc tsvector NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE tasks (
  id text NOT NULL,
  title text NOT NULL,
  description text NOT NULL DEFAULT ''::text,
  status text NOT NULL,
  priority smallint NOT NULL,
  labels text[] NOT NULL DEFAULT '{}'::text[],
  version integer NOT NULL DEFAULT 1,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL,
  lease_id text,
  lease_holder_id text,
  lease_holder_kind text,
  lease_expires_at timestamp with time zone,
  lease_epoch integer NOT NULL DEFAULT 0,
  blocked_by text[] NOT NULL DEFAULT '{}'::text[],
  deleted_at timestamp with time zone,
  assignee_id text,
  assignee_kind text,
  handoff jsonb,
  changes_requested_id text,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer,
  not_before timestamp with time zone,
  blocked_reason text,
  failures jsonb NOT NULL DEFAULT '[]'::jsonb,
  parent_id text,
  due_at timestamp with time zone,
  overdue_at timestamp with time zone,
  open_asks integer NOT NULL DEFAULT 0,
  review_overdue_at timestamp with time zone,
  overdue_asks integer NOT NULL DEFAULT 0,
  max_cost_micros bigint,
  max_cost_currency text,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text),
  archived_at timestamp with time zone
);

CREATE TABLE templates (
  id text NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  parameters jsonb NOT NULL,
  tasks jsonb NOT NULL,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE tokens (
  id text NOT NULL,
  agent_id text NOT NULL,
  machine text NOT NULL,
  token_hash bytea NOT NULL,
  token_prefix text NOT NULL,
  scopes text[] NOT NULL,
  expires_at timestamp with time zone,
  last_used_at timestamp with time zone,
  revoked_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE webhook_deliveries (
  id text NOT NULL,
  webhook_id text NOT NULL,
  event_id text NOT NULL,
  event_seq bigint NOT NULL,
  state text NOT NULL,
  attempt_count integer NOT NULL DEFAULT 0,
  attempts jsonb NOT NULL DEFAULT '[]'::jsonb,
  next_attempt_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE webhooks (
  id text NOT NULL,
  url text NOT NULL,
  event_types text[],
  enabled boolean NOT NULL,
  secret_ref text NOT NULL,
  cursor_seq bigint NOT NULL,
  disabled_reason text,
  version integer NOT NULL DEFAULT 1,
  deleted_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  created_by_kind text NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  updated_by_id text NOT NULL,
  updated_by_kind text NOT NULL,
  workspace_id text NOT NULL DEFAULT COALESCE(NULLIF(current_setting('baton.workspace'::text, true), ''::text), 'wsp_00000000000000000000000000'::text)
);

CREATE TABLE workspaces (
  id text NOT NULL,
  name text NOT NULL,
  created_at timestamp with time zone NOT NULL,
  created_by_id text NOT NULL,
  escalate_ask_s integer,
  escalate_approval_s integer,
  escalate_review_s integer,
  escalate_to text[],
  rate_limit integer,
  chat_webhook_url text,
  event_retention_days integer
);

ALTER TABLE agents ADD CONSTRAINT agents_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE agents ADD CONSTRAINT agents_external_id_key UNIQUE (external_id);
ALTER TABLE agents ADD CONSTRAINT agents_kind_check CHECK ((kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE agents ADD CONSTRAINT agents_pkey PRIMARY KEY (id);
ALTER TABLE agents ADD CONSTRAINT agents_rate_limit_check CHECK ((rate_limit > 0));
ALTER TABLE agents ADD CONSTRAINT agents_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text])));
ALTER TABLE agents ADD CONSTRAINT agents_role_human CHECK (((role IS NULL) OR (kind = 'human'::text)));
ALTER TABLE agents ADD CONSTRAINT agents_updated_by_kind_check CHECK ((updated_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE approvals ADD CONSTRAINT approvals_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE approvals ADD CONSTRAINT approvals_decided_by_kind_check CHECK ((decided_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE approvals ADD CONSTRAINT approvals_pkey PRIMARY KEY (id);
ALTER TABLE approvals ADD CONSTRAINT approvals_requested_by_kind_check CHECK ((requested_by_kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE approvals ADD CONSTRAINT approvals_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text, 'failed'::text])));
ALTER TABLE artifact_contents ADD CONSTRAINT artifact_contents_artifact_id_fkey FOREIGN KEY (artifact_id) REFERENCES artifacts(id);
ALTER TABLE artifact_contents ADD CONSTRAINT artifact_contents_pkey PRIMARY KEY (artifact_id);
ALTER TABLE artifacts ADD CONSTRAINT artifacts_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE artifacts ADD CONSTRAINT artifacts_pkey PRIMARY KEY (id);
ALTER TABLE artifacts ADD CONSTRAINT artifacts_size_bytes_check CHECK ((size_bytes >= 0));
ALTER TABLE artifacts ADD CONSTRAINT artifacts_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(id);
ALTER TABLE asks ADD CONSTRAINT asks_answered_by_kind_check CHECK ((answered_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE asks ADD CONSTRAINT asks_asked_by_kind_check CHECK ((asked_by_kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE asks ADD CONSTRAINT asks_one_addressee CHECK (((to_id IS NULL) <> (to_role IS NULL)));
ALTER TABLE asks ADD CONSTRAINT asks_pkey PRIMARY KEY (id);
ALTER TABLE asks ADD CONSTRAINT asks_status_check CHECK ((status = ANY (ARRAY['open'::text, 'answered'::text, 'defaulted'::text, 'cancelled'::text])));
ALTER TABLE asks ADD CONSTRAINT asks_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(id);
ALTER TABLE asks ADD CONSTRAINT asks_to_id_fkey FOREIGN KEY (to_id) REFERENCES agents(id);
ALTER TABLE asks ADD CONSTRAINT asks_to_role_check CHECK ((to_role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text])));
ALTER TABLE baton_migrations ADD CONSTRAINT baton_migrations_pkey PRIMARY KEY (name);
ALTER TABLE billing_accounts ADD CONSTRAINT billing_accounts_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE billing_accounts ADD CONSTRAINT billing_accounts_last_invoice_status_check CHECK ((last_invoice_status = ANY (ARRAY['paid'::text, 'payment_failed'::text])));
ALTER TABLE billing_accounts ADD CONSTRAINT billing_accounts_pkey PRIMARY KEY (customer_id);
ALTER TABLE billing_accounts ADD CONSTRAINT billing_accounts_updated_by_kind_check CHECK ((updated_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE budget_spend ADD CONSTRAINT budget_spend_budget_id_fkey FOREIGN KEY (budget_id) REFERENCES budgets(id);
ALTER TABLE budgets ADD CONSTRAINT budgets_applies_to_check CHECK ((applies_to = ANY (ARRAY['agent'::text, 'label'::text, 'task'::text, 'workspace'::text])));
ALTER TABLE budgets ADD CONSTRAINT budgets_check CHECK (((unit = 'cost'::text) = (currency IS NOT NULL)));
ALTER TABLE budgets ADD CONSTRAINT budgets_limit_amount_check CHECK ((limit_amount > 0));
ALTER TABLE budgets ADD CONSTRAINT budgets_period_check CHECK ((period = ANY (ARRAY['day'::text, 'week'::text, 'month'::text, 'lifetime'::text])));
ALTER TABLE budgets ADD CONSTRAINT budgets_pkey PRIMARY KEY (id);
ALTER TABLE budgets ADD CONSTRAINT budgets_unit_check CHECK ((unit = ANY (ARRAY['cost'::text, 'tokens'::text, 'runs'::text])));
ALTER TABLE comments ADD CONSTRAINT comments_author_kind_check CHECK ((author_kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE comments ADD CONSTRAINT comments_pkey PRIMARY KEY (id);
ALTER TABLE comments ADD CONSTRAINT comments_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(id);
ALTER TABLE event_archives ADD CONSTRAINT event_archives_pkey PRIMARY KEY (id);
ALTER TABLE events ADD CONSTRAINT events_actor_kind_check CHECK ((actor_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id);
ALTER TABLE events ADD CONSTRAINT events_seq_key UNIQUE (seq);
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (principal_id, key);
ALTER TABLE inbound_deliveries ADD CONSTRAINT inbound_deliveries_pkey PRIMARY KEY (provider, provider_event_id);
ALTER TABLE inbound_deliveries ADD CONSTRAINT inbound_deliveries_provider_check CHECK ((provider = ANY (ARRAY['payments'::text, 'auth'::text])));
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_kind_check CHECK ((kind = ANY (ARRAY['ask'::text, 'answer'::text, 'mention'::text, 'review'::text, 'assigned'::text, 'approval'::text, 'overdue'::text, 'budget'::text, 'reply'::text, 'changed'::text, 'to_review'::text])));
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_pkey PRIMARY KEY (id);
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_principal_id_fkey FOREIGN KEY (principal_id) REFERENCES agents(id);
ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_state_check CHECK ((state = ANY (ARRAY['unread'::text, 'read'::text, 'done'::text])));
ALTER TABLE leases ADD CONSTRAINT leases_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE leases ADD CONSTRAINT leases_holder_kind_check CHECK ((holder_kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE leases ADD CONSTRAINT leases_pkey PRIMARY KEY (id);
ALTER TABLE leases ADD CONSTRAINT leases_state_check CHECK ((state = ANY (ARRAY['active'::text, 'released'::text, 'expired'::text, 'ended'::text])));
ALTER TABLE leases ADD CONSTRAINT leases_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(id);
ALTER TABLE mcp_tasks ADD CONSTRAINT mcp_tasks_follows_check CHECK ((follows = ANY (ARRAY['wait'::text, 'approval'::text])));
ALTER TABLE mcp_tasks ADD CONSTRAINT mcp_tasks_pkey PRIMARY KEY (id);
ALTER TABLE mcp_tasks ADD CONSTRAINT mcp_tasks_status_check CHECK ((status = ANY (ARRAY['working'::text, 'completed'::text, 'failed'::text, 'cancelled'::text])));
ALTER TABLE notification_links_used ADD CONSTRAINT notification_links_used_pkey PRIMARY KEY (link_id);
ALTER TABLE notification_preferences ADD CONSTRAINT notification_preferences_email_check CHECK ((email = ANY (ARRAY['immediate'::text, 'digest'::text, 'off'::text])));
ALTER TABLE notification_preferences ADD CONSTRAINT notification_preferences_pkey PRIMARY KEY (principal_id);
ALTER TABLE notification_preferences ADD CONSTRAINT notification_preferences_principal_id_fkey FOREIGN KEY (principal_id) REFERENCES agents(id);
ALTER TABLE notifications ADD CONSTRAINT notifications_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'chat'::text])));
ALTER TABLE notifications ADD CONSTRAINT notifications_pkey PRIMARY KEY (inbox_item_id, channel);
ALTER TABLE notifications ADD CONSTRAINT notifications_principal_id_fkey FOREIGN KEY (principal_id) REFERENCES agents(id);
ALTER TABLE notifications ADD CONSTRAINT notifications_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'sent'::text, 'failed'::text, 'skipped'::text])));
ALTER TABLE oidc_identities ADD CONSTRAINT oidc_identities_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents(id);
ALTER TABLE oidc_identities ADD CONSTRAINT oidc_identities_pkey PRIMARY KEY (issuer, subject, workspace_id);
ALTER TABLE rate_counters ADD CONSTRAINT rate_counters_pkey PRIMARY KEY (token_id, window_start, shard);
ALTER TABLE reservations ADD CONSTRAINT reservations_check CHECK (((resource IS NULL) <> (repo IS NULL)));
ALTER TABLE reservations ADD CONSTRAINT reservations_check1 CHECK (((repo IS NULL) = (paths IS NULL)));
ALTER TABLE reservations ADD CONSTRAINT reservations_end_reason_check CHECK ((end_reason = ANY (ARRAY['released'::text, 'expired'::text, 'lease_ended'::text])));
ALTER TABLE reservations ADD CONSTRAINT reservations_mode_check CHECK ((mode = ANY (ARRAY['exclusive'::text, 'shared'::text])));
ALTER TABLE reservations ADD CONSTRAINT reservations_pkey PRIMARY KEY (id);
ALTER TABLE run_log ADD CONSTRAINT run_log_lease_id_fkey FOREIGN KEY (lease_id) REFERENCES runs(lease_id);
ALTER TABLE run_log ADD CONSTRAINT run_log_level_check CHECK ((level = ANY (ARRAY['info'::text, 'warn'::text, 'error'::text])));
ALTER TABLE run_log ADD CONSTRAINT run_log_pkey PRIMARY KEY (lease_id, seq);
ALTER TABLE runs ADD CONSTRAINT runs_cost_micros_check CHECK ((cost_micros >= 0));
ALTER TABLE runs ADD CONSTRAINT runs_input_tokens_check CHECK ((input_tokens >= 0));
ALTER TABLE runs ADD CONSTRAINT runs_lease_id_fkey FOREIGN KEY (lease_id) REFERENCES leases(id);
ALTER TABLE runs ADD CONSTRAINT runs_output_tokens_check CHECK ((output_tokens >= 0));
ALTER TABLE runs ADD CONSTRAINT runs_pkey PRIMARY KEY (lease_id);
ALTER TABLE runs ADD CONSTRAINT runs_tool_calls_check CHECK ((tool_calls >= 0));
ALTER TABLE schedules ADD CONSTRAINT schedules_catch_up_check CHECK (((catch_up >= 0) AND (catch_up <= 100)));
ALTER TABLE schedules ADD CONSTRAINT schedules_overlap_check CHECK ((overlap = ANY (ARRAY['skip'::text, 'coalesce'::text, 'always'::text])));
ALTER TABLE schedules ADD CONSTRAINT schedules_pkey PRIMARY KEY (id);
ALTER TABLE server_keys ADD CONSTRAINT server_keys_key_check CHECK ((length(key) >= 32));
ALTER TABLE server_keys ADD CONSTRAINT server_keys_pkey PRIMARY KEY (purpose);
ALTER TABLE sessions ADD CONSTRAINT sessions_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents(id);
ALTER TABLE sessions ADD CONSTRAINT sessions_end_reason_check CHECK ((end_reason = ANY (ARRAY['signed_out'::text, 'revoked'::text, 'idle'::text, 'disabled'::text, 'switched'::text])));
ALTER TABLE sessions ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);
ALTER TABLE sessions ADD CONSTRAINT sessions_token_id_fkey FOREIGN KEY (token_id) REFERENCES tokens(id);
ALTER TABLE sessions ADD CONSTRAINT sessions_token_id_key UNIQUE (token_id);
ALTER TABLE stat_days ADD CONSTRAINT stat_days_dim_check CHECK ((dim = ANY (ARRAY['all'::text, 'agent'::text, 'label'::text])));
ALTER TABLE stat_days ADD CONSTRAINT stat_days_pkey PRIMARY KEY (workspace_id, dim, day, key, metric, shard);
ALTER TABLE task_flow ADD CONSTRAINT task_flow_pkey PRIMARY KEY (task_id);
ALTER TABLE task_reservations ADD CONSTRAINT task_reservations_pkey PRIMARY KEY (task_id);
ALTER TABLE task_search ADD CONSTRAINT task_search_pkey PRIMARY KEY (task_id);
ALTER TABLE task_search ADD CONSTRAINT task_search_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(id);
ALTER TABLE tasks ADD CONSTRAINT tasks_assignee_id_fkey FOREIGN KEY (assignee_id) REFERENCES agents(id);
ALTER TABLE tasks ADD CONSTRAINT tasks_assignee_kind_check CHECK ((assignee_kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE tasks ADD CONSTRAINT tasks_blocked_reason_check CHECK ((blocked_reason = 'attempts_exhausted'::text));
ALTER TABLE tasks ADD CONSTRAINT tasks_changes_requested_id_fkey FOREIGN KEY (changes_requested_id) REFERENCES comments(id);
ALTER TABLE tasks ADD CONSTRAINT tasks_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE tasks ADD CONSTRAINT tasks_lease_holder_kind_check CHECK ((lease_holder_kind = ANY (ARRAY['human'::text, 'agent'::text])));
ALTER TABLE tasks ADD CONSTRAINT tasks_lease_id_fkey FOREIGN KEY (lease_id) REFERENCES leases(id);
ALTER TABLE tasks ADD CONSTRAINT tasks_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 100)));
ALTER TABLE tasks ADD CONSTRAINT tasks_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES tasks(id);
ALTER TABLE tasks ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);
ALTER TABLE tasks ADD CONSTRAINT tasks_priority_check CHECK (((priority >= 0) AND (priority <= 3)));
ALTER TABLE tasks ADD CONSTRAINT tasks_status_check CHECK ((status = ANY (ARRAY['todo'::text, 'in_progress'::text, 'in_review'::text, 'blocked'::text, 'done'::text, 'cancelled'::text])));
ALTER TABLE tasks ADD CONSTRAINT tasks_updated_by_kind_check CHECK ((updated_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE templates ADD CONSTRAINT templates_pkey PRIMARY KEY (id);
ALTER TABLE tokens ADD CONSTRAINT tokens_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents(id);
ALTER TABLE tokens ADD CONSTRAINT tokens_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE tokens ADD CONSTRAINT tokens_pkey PRIMARY KEY (id);
ALTER TABLE tokens ADD CONSTRAINT tokens_token_hash_key UNIQUE (token_hash);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text])));
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_webhook_id_event_id_key UNIQUE (webhook_id, event_id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks(id);
ALTER TABLE webhooks ADD CONSTRAINT webhooks_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE webhooks ADD CONSTRAINT webhooks_pkey PRIMARY KEY (id);
ALTER TABLE webhooks ADD CONSTRAINT webhooks_updated_by_kind_check CHECK ((updated_by_kind = ANY (ARRAY['human'::text, 'agent'::text, 'system'::text])));
ALTER TABLE workspaces ADD CONSTRAINT workspaces_escalate_approval_s_check CHECK ((escalate_approval_s >= 0));
ALTER TABLE workspaces ADD CONSTRAINT workspaces_escalate_ask_s_check CHECK ((escalate_ask_s >= 0));
ALTER TABLE workspaces ADD CONSTRAINT workspaces_escalate_review_s_check CHECK ((escalate_review_s >= 0));
ALTER TABLE workspaces ADD CONSTRAINT workspaces_event_retention_days_check CHECK ((event_retention_days > 0));
ALTER TABLE workspaces ADD CONSTRAINT workspaces_name_key UNIQUE (name);
ALTER TABLE workspaces ADD CONSTRAINT workspaces_pkey PRIMARY KEY (id);
ALTER TABLE workspaces ADD CONSTRAINT workspaces_rate_limit_check CHECK ((rate_limit > 0));

CREATE INDEX agents_humans ON public.agents USING btree (workspace_id, id) WHERE ((kind = 'human'::text) AND (NOT disabled));
CREATE INDEX agents_spelling ON public.agents USING btree (workspace_id, spelling);
CREATE INDEX approvals_pending_unmarked ON public.approvals USING btree (created_at) WHERE ((status = 'pending'::text) AND (overdue_at IS NULL));
CREATE INDEX approvals_status_id ON public.approvals USING btree (status, id);
CREATE INDEX artifacts_task_id ON public.artifacts USING btree (task_id, id) WHERE (task_id IS NOT NULL);
CREATE INDEX asks_open_due ON public.asks USING btree (due_at) WHERE (status = 'open'::text);
CREATE INDEX asks_open_to ON public.asks USING btree (to_id, id) WHERE (status = 'open'::text);
CREATE INDEX asks_open_to_role ON public.asks USING btree (to_role, id) WHERE ((status = 'open'::text) AND (to_role IS NOT NULL));
CREATE INDEX asks_open_unmarked ON public.asks USING btree (created_at) WHERE ((status = 'open'::text) AND (overdue_at IS NULL));
CREATE INDEX asks_task ON public.asks USING btree (task_id, id);
CREATE INDEX budget_spend_window ON public.budget_spend USING btree (budget_id, window_start) INCLUDE (amount);
CREATE INDEX budgets_target ON public.budgets USING btree (applies_to, target) WHERE (deleted_at IS NULL);
CREATE UNIQUE INDEX budgets_task_max_cost ON public.budgets USING btree (target) WHERE (task_max_cost AND (deleted_at IS NULL));
CREATE INDEX comments_search ON public.comments USING gin (search_doc);
CREATE INDEX comments_task_id ON public.comments USING btree (task_id, id);
CREATE INDEX event_archives_workspace ON public.event_archives USING btree (workspace_id, id);
CREATE INDEX events_actor_seq ON public.events USING btree (actor_id, seq);
CREATE INDEX events_subject_seq ON public.events USING btree (subject, seq);
CREATE INDEX events_type_seq ON public.events USING btree (type, seq);
CREATE INDEX events_workspace_seq ON public.events USING btree (workspace_id, seq);
CREATE INDEX idempotency_keys_expires_at ON public.idempotency_keys USING btree (expires_at);
CREATE INDEX inbox_items_open_ref ON public.inbox_items USING btree (kind, ref_id) WHERE (state <> 'done'::text);
CREATE INDEX inbox_items_principal ON public.inbox_items USING btree (principal_id, state, id);
CREATE INDEX leases_active_expires_at ON public.leases USING btree (expires_at) WHERE (state = 'active'::text);
CREATE INDEX leases_holder_active ON public.leases USING btree (holder_id) WHERE (state = 'active'::text);
CREATE INDEX leases_holder_id ON public.leases USING btree (holder_id, id);
CREATE INDEX leases_task_id ON public.leases USING btree (task_id, acquired_at);
CREATE INDEX leases_warn_due ON public.leases USING btree (warn_at) WHERE ((state = 'active'::text) AND (warned_at IS NULL));
CREATE INDEX mcp_tasks_expires ON public.mcp_tasks USING btree (expires_at);
CREATE INDEX notifications_digest ON public.notifications USING btree (principal_id) WHERE ((state = 'pending'::text) AND digest);
CREATE INDEX notifications_due ON public.notifications USING btree (next_attempt_at) WHERE (state = 'pending'::text);
CREATE INDEX oidc_identities_agent ON public.oidc_identities USING btree (agent_id);
CREATE INDEX reservations_key_epoch ON public.reservations USING btree (lock_key, epoch);
CREATE INDEX reservations_live ON public.reservations USING btree (lock_key) WHERE (ended_at IS NULL);
CREATE INDEX schedules_due ON public.schedules USING btree (next_run_at) WHERE (enabled AND (deleted_at IS NULL));
CREATE INDEX sessions_agent ON public.sessions USING btree (agent_id, id);
CREATE INDEX sessions_provider_session ON public.sessions USING btree (issuer, provider_session_id) WHERE ((provider_session_id IS NOT NULL) AND (ended_at IS NULL));
CREATE INDEX task_search_doc ON public.task_search USING gin (search_doc);
CREATE INDEX tasks_archived ON public.tasks USING btree (id) WHERE (archived_at IS NOT NULL);
CREATE INDEX tasks_assignee ON public.tasks USING btree (assignee_id, id) WHERE (assignee_id IS NOT NULL);
CREATE INDEX tasks_blocked_by ON public.tasks USING gin (blocked_by) WHERE (blocked_by <> '{}'::text[]);
CREATE INDEX tasks_dead_letter ON public.tasks USING btree (id) WHERE (blocked_reason IS NOT NULL);
CREATE INDEX tasks_due ON public.tasks USING btree (due_at) WHERE ((due_at IS NOT NULL) AND (overdue_at IS NULL) AND (deleted_at IS NULL) AND (status <> ALL (ARRAY['done'::text, 'cancelled'::text])));
CREATE INDEX tasks_lease_expires_at ON public.tasks USING btree (lease_expires_at) WHERE (status = 'in_progress'::text);
CREATE INDEX tasks_parent ON public.tasks USING btree (parent_id, status) WHERE (parent_id IS NOT NULL);
CREATE INDEX tasks_queue ON public.tasks USING btree (workspace_id, priority DESC, id) WHERE (status = 'todo'::text);
CREATE INDEX tasks_queue_not_before ON public.tasks USING btree (workspace_id, not_before) WHERE ((status = 'todo'::text) AND (not_before IS NOT NULL));
CREATE INDEX tasks_status_id ON public.tasks USING btree (workspace_id, status, id);
CREATE INDEX tokens_agent_id ON public.tokens USING btree (agent_id);
CREATE UNIQUE INDEX tokens_one_live_per_machine ON public.tokens USING btree (agent_id, machine) WHERE (revoked_at IS NULL);
CREATE INDEX webhook_deliveries_due ON public.webhook_deliveries USING btree (next_attempt_at) WHERE (state = 'pending'::text);
CREATE INDEX webhook_deliveries_finished ON public.webhook_deliveries USING btree (updated_at) WHERE (state <> 'pending'::text);
CREATE INDEX webhook_deliveries_webhook ON public.webhook_deliveries USING btree (webhook_id, event_seq);
CREATE INDEX webhooks_live ON public.webhooks USING btree (id) WHERE (enabled AND (deleted_at IS NULL));

CREATE OR REPLACE FUNCTION public.baton_events_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('baton.archiving', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$function$
;
CREATE OR REPLACE FUNCTION public.baton_key_taken()
 RETURNS text
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'idempotency key already stored by a concurrent request' USING ERRCODE = 'BK001';
END $function$
;
CREATE OR REPLACE FUNCTION public.baton_lease_warn_at()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  NEW.warn_at := NEW.expires_at - make_interval(secs => NEW.ttl_s * 0.2);
  RETURN NEW;
END
$function$
;
CREATE OR REPLACE FUNCTION public.baton_member_workspaces()
 RETURNS SETOF text
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'public'
AS $function$
      SELECT current_setting('baton.workspace', true)
      UNION
      SELECT them.workspace_id FROM oidc_identities me
        JOIN oidc_identities them ON them.issuer = me.issuer AND them.subject = me.subject
        WHERE me.agent_id = current_setting('baton.principal', true)
    $function$
;
CREATE OR REPLACE FUNCTION public.baton_stat_add(p_day date, p_agent text, p_labels text[], p_metric text, p_amount bigint, p_seconds double precision)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
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
$function$
;
CREATE OR REPLACE FUNCTION public.baton_stat_bucket(seconds double precision)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT width_bucket(seconds, ARRAY[0, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 43200,
    86400, 172800, 259200, 432000, 604800, 1209600, 2592000, 5184000, 7776000]::double precision[])
$function$
;
CREATE OR REPLACE FUNCTION public.baton_stat_lease()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  ended timestamptz := CASE WHEN NEW.state = 'expired' THEN NEW.expires_at ELSE coalesce(NEW.ended_at, NEW.expires_at) END;
BEGIN
  PERFORM baton_stat_add(baton_utc_day(ended), NEW.holder_id, (SELECT labels FROM tasks WHERE id = NEW.task_id), 'runs', 1,
    extract(epoch FROM ended - NEW.acquired_at));
  RETURN NULL;
END
$function$
;
CREATE OR REPLACE FUNCTION public.baton_stat_run_failure()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NEW.failure_code IS DISTINCT FROM 'cancelled' OR (TG_OP = 'UPDATE' AND OLD.failure_code IS NOT DISTINCT FROM NEW.failure_code) THEN
    RETURN NULL;
  END IF;
  PERFORM baton_stat_add(baton_utc_day(coalesce(l.ended_at, l.expires_at)), l.holder_id, t.labels, 'fail:cancelled', 1, NULL)
  FROM leases l JOIN tasks t ON t.id = l.task_id WHERE l.id = NEW.lease_id;
  RETURN NULL;
END
$function$
;
CREATE OR REPLACE FUNCTION public.baton_stat_task()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$
;
CREATE OR REPLACE FUNCTION public.baton_stat_usage()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
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
$function$
;
CREATE OR REPLACE FUNCTION public.baton_task_search()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO task_search (task_id, search_doc)
  VALUES (NEW.id, setweight(to_tsvector('english', NEW.title), 'A') || setweight(to_tsvector('english', NEW.description), 'B'))
  ON CONFLICT (task_id) DO UPDATE SET search_doc = EXCLUDED.search_doc;
  RETURN NULL;
END
$function$
;
CREATE OR REPLACE FUNCTION public.baton_utc_day(ts timestamp with time zone)
 RETURNS date
 LANGUAGE sql
 IMMUTABLE
AS $function$ SELECT (ts AT TIME ZONE 'UTC')::date $function$
;

CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION baton_events_append_only();
CREATE TRIGGER events_no_update_delete BEFORE DELETE OR UPDATE ON public.events FOR EACH ROW EXECUTE FUNCTION baton_events_append_only();
CREATE TRIGGER leases_stat_end AFTER UPDATE OF state ON public.leases FOR EACH ROW WHEN (((old.state = 'active'::text) AND (new.state <> 'active'::text))) EXECUTE FUNCTION baton_stat_lease();
CREATE TRIGGER leases_warn_at BEFORE INSERT OR UPDATE OF expires_at, ttl_s ON public.leases FOR EACH ROW EXECUTE FUNCTION baton_lease_warn_at();
CREATE TRIGGER runs_stat_failure AFTER INSERT OR UPDATE OF failure_code ON public.runs FOR EACH ROW EXECUTE FUNCTION baton_stat_run_failure();
CREATE TRIGGER runs_stat_usage AFTER INSERT OR UPDATE OF input_tokens, output_tokens, cost_micros, tool_calls ON public.runs FOR EACH ROW EXECUTE FUNCTION baton_stat_usage();
CREATE TRIGGER tasks_search_insert AFTER INSERT ON public.tasks FOR EACH ROW EXECUTE FUNCTION baton_task_search();
CREATE TRIGGER tasks_search_update AFTER UPDATE OF title, description ON public.tasks FOR EACH ROW WHEN (((old.title IS DISTINCT FROM new.title) OR (old.description IS DISTINCT FROM new.description))) EXECUTE FUNCTION baton_task_search();
CREATE TRIGGER tasks_stat_insert AFTER INSERT ON public.tasks FOR EACH ROW EXECUTE FUNCTION baton_stat_task();
CREATE TRIGGER tasks_stat_update AFTER UPDATE OF status, attempts ON public.tasks FOR EACH ROW WHEN (((old.status IS DISTINCT FROM new.status) OR (new.attempts > old.attempts))) EXECUTE FUNCTION baton_stat_task();
