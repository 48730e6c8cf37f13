import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

/** Row types, snake_case as in SQL. Mapped to API shapes by one mapper per entity. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface AgentsTable {
  /** Its workspace (migration 0260): a principal belongs to one. */
  workspace_id: Generated<string>;
  id: string;
  name: string;
  kind: 'human' | 'agent';
  scopes: string[];
  tool_allowlist: string[] | null;
  disabled: Generated<boolean>;
  rate_limit: number | null;
  external_id: Generated<string | null>;
  /** When the auth provider last changed this human; older deliveries are not applied. */
  external_updated_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  email: Generated<string | null>;
  /** A human's role (src/domain/roles.ts); null for agents and for humans given scopes one by one. */
  role: Generated<'owner' | 'admin' | 'member' | 'viewer' | null>;
  /** The name as a mention spells it, lowercased, each space `_`, in byte order (migration 0343): the directory's `prefix`. */
  spelling: GeneratedAlways<string>;
  version: Generated<number>;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
}

export interface TokensTable {
  id: string;
  agent_id: string;
  machine: string;
  token_hash: Uint8Array;
  token_prefix: string;
  scopes: string[];
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
}

export interface TasksTable {
  id: string;
  title: string;
  description: Generated<string>;
  status: string;
  priority: number;
  labels: Generated<string[]>;
  version: Generated<number>;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
  lease_id: string | null;
  lease_holder_id: string | null;
  lease_holder_kind: 'human' | 'agent' | null;
  lease_expires_at: Timestamp | null;
  lease_epoch: Generated<number>;
  blocked_by: Generated<string[]>;
  deleted_at: Timestamp | null;
  assignee_id: Generated<string | null>;
  assignee_kind: Generated<'human' | 'agent' | null>;
  handoff: Generated<Handoff | null>;
  changes_requested_id: Generated<string | null>;
  attempts: Generated<number>;
  max_attempts: Generated<number | null>;
  /** max_cost in micro-units of `max_cost_currency`; null: none (spec/runs.md "Budgets"). */
  max_cost_micros: Generated<Int8 | null>;
  max_cost_currency: Generated<string | null>;
  not_before: Generated<Date | null>;
  blocked_reason: Generated<'attempts_exhausted' | null>;
  failures: Generated<AttemptFailure[]>;
  parent_id: Generated<string | null>;
  due_at: Generated<Date | null>;
  overdue_at: Generated<Date | null>;
  open_asks: Generated<number>;
  /** Set by the escalation pass; the review is overdue while this is later than its hand-in. */
  review_overdue_at: Generated<Date | null>;
  overdue_asks: Generated<number>;
  /** Set while the task is archived (a finished task out of lists by default); null otherwise. */
  archived_at: Generated<Date | null>;
}

/** One failed attempt, as `tasks.failures` keeps it. */
export interface AttemptFailure {
  at: string;
  kind: 'expired' | 'failed';
  /** spec/runs.md "Failure codes"; absent on failures recorded before codes (domain/failure-codes.ts legacyFailureCode). */
  code?: string;
  reason: string | null;
  lease_id: string;
  holder_id: string;
}

/** The last hand-in for review, as `tasks.handoff` stores it. */
export interface Handoff {
  summary: string;
  artifacts: string[];
  by: { id: string; kind: 'human' | 'agent' };
  at: string;
}

export interface CommentsTable {
  id: string;
  task_id: string;
  body: string;
  artifacts: Generated<string[]>;
  mentions: Generated<string[]>;
  author_id: string;
  author_kind: 'human' | 'agent';
  version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
  deleted_by_id: string | null;
}

export interface LeasesTable {
  id: string;
  task_id: string;
  holder_id: string;
  holder_kind: 'human' | 'agent';
  token_id: string | null;
  machine: string | null;
  epoch: number;
  ttl_s: number;
  state: 'active' | 'released' | 'expired' | 'ended';
  acquired_at: Timestamp;
  renewed_at: Timestamp;
  expires_at: Timestamp;
  warned_at: Timestamp | null;
  // Also `warn_at`, when the lease passes 80 % of its term: kept by a trigger and read only by the
  // warning sweep's SQL (migration 0334), so not a field of the row here.
  ended_at: Timestamp | null;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
}

export interface EventsTable {
  /** Its workspace (migration 0260), the transaction's that appended it. */
  workspace_id: Generated<string>;
  seq: Generated<string>;
  id: string;
  type: string;
  subject: string;
  actor_id: string;
  actor_kind: string;
  token_id: string | null;
  machine: string | null;
  idempotency_key: string | null;
  approval_id: Generated<string | null>;
  data: unknown;
  created_at: Timestamp;
}

/** One run of `baton archive-events` (migration 0060). */
export interface EventArchivesTable {
  id: Generated<string>;
  through_seq: string;
  max_id: string;
  event_count: string;
  before: Timestamp;
  archived_at: Timestamp;
  file: string;
  /** Runs are per workspace (migration 0310): its own archived range and oldest cursor. */
  workspace_id: Generated<string>;
}

export interface ApprovalsTable {
  id: string;
  operation: string;
  input: unknown;
  fingerprint: Uint8Array;
  target_id: string | null;
  target_version: number | null;
  status: 'pending' | 'approved' | 'denied' | 'failed';
  requested_by_id: string;
  requested_by_kind: 'human' | 'agent';
  requested_token_id: string;
  requested_machine: string;
  requested_scopes: string[];
  idempotency_key: string;
  decided_by_id: string | null;
  decided_by_kind: string | null;
  decided_at: Timestamp | null;
  reason: string | null;
  result_status: number | null;
  result_body: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  overdue_at: Generated<Date | null>;
}

export interface RateCountersTable {
  token_id: string;
  window_start: string;
  shard: number;
  count: number;
}

export interface IdempotencyKeysTable {
  principal_id: string;
  key: string;
  fingerprint: Uint8Array;
  operation: string;
  status_code: number;
  response_body: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface InboundDeliveriesTable {
  provider: 'payments' | 'auth';
  provider_event_id: string;
  provider_type: string;
  event_id: string;
  received_at: Timestamp;
}

export interface BillingAccountsTable {
  customer_id: string;
  email: string | null;
  checkout_session_id: string | null;
  subscription_id: string | null;
  subscription_status: string | null;
  price_id: string | null;
  last_invoice_id: string | null;
  last_invoice_status: 'paid' | 'payment_failed' | null;
  version: Generated<number>;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
}

export interface WebhooksTable {
  id: string;
  url: string;
  event_types: string[] | null;
  enabled: boolean;
  secret_ref: string;
  cursor_seq: string;
  disabled_reason: string | null;
  version: Generated<number>;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
}

export interface ArtifactsTable {
  id: string;
  task_id: string | null;
  name: string | null;
  content_type: string;
  size_bytes: number;
  sha256: string;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
}

export interface ArtifactContentsTable {
  artifact_id: string;
  content: Uint8Array;
}

export interface WebhookAttempt {
  at: string;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_seq: string;
  state: 'pending' | 'delivered' | 'failed';
  attempt_count: Generated<number>;
  attempts: ColumnType<WebhookAttempt[], string | undefined, string>;
  next_attempt_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Keys the server makes for itself, one per purpose (migrations/0080_cursor_key.sql). */
export interface ServerKeysTable {
  purpose: string;
  key: Uint8Array;
  created_at: Generated<Date>;
}

export interface SchedulesTable {
  id: string;
  name: string;
  cron: string;
  time_zone: string;
  /** The task each occurrence creates: tasks_create's input without ids of its own; null when it makes a template's graph. */
  task: unknown;
  /** The template each occurrence instantiates, `{id, params}`; null when it makes one task. */
  template: ScheduledTemplate | null;
  overlap: 'skip' | 'coalesce' | 'always';
  catch_up: number;
  enabled: boolean;
  /** The first occurrence not yet handled; null when the expression has no more. */
  next_run_at: Timestamp | null;
  /** An occurrence held back (overlap coalesce) while the last task is open. */
  held_at: Timestamp | null;
  last_run_at: Timestamp | null;
  last_task_id: string | null;
  /** The token the schedule was created with: its tasks carry it as their provenance. */
  owner_token_id: string;
  version: Generated<number>;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
}

export interface BudgetsTable {
  id: string;
  name: string;
  applies_to: 'agent' | 'label' | 'task' | 'workspace';
  /** A principal id, a label, a task id, or the budget's own workspace id. */
  target: string;
  unit: 'cost' | 'tokens' | 'runs';
  currency: string | null;
  period: 'day' | 'week' | 'month' | 'lifetime';
  /** Micro-units of `currency`, tokens, or runs. */
  limit_amount: Int8;
  /** The task budget a task's max_cost made (one per task), kept in step with the task's columns. */
  task_max_cost: Generated<boolean>;
  warned_for: Timestamp | null;
  exhausted_for: Timestamp | null;
  version: Generated<number>;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
}

export interface TemplatesTable {
  id: string;
  name: string;
  description: string;
  /** The declared parameters, as templates_create took them. */
  parameters: unknown;
  /** The task graph, as templates_create took it. */
  tasks: unknown;
  version: Generated<number>;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  created_by_id: string;
  created_by_kind: string;
  updated_at: Timestamp;
  updated_by_id: string;
  updated_by_kind: string;
}

export interface BudgetSpendTable {
  budget_id: string;
  window_start: Timestamp;
  /** Micro-units, tokens or runs; negative for an override that lowered what a window spent. */
  amount: Int8;
  at: Timestamp;
}

export interface OidcIdentitiesTable {
  /** One row per workspace the person is a member of, each with its own principal (`agent_id`). */
  workspace_id: string;
  issuer: string;
  subject: string;
  agent_id: string;
  email: string | null;
  created_at: Timestamp;
  last_sign_in_at: Timestamp;
}

export interface SessionsTable {
  /** The workspace of the session's principal (migration 0260). */
  workspace_id: string;
  id: string;
  token_id: string;
  agent_id: string;
  user_agent: string;
  issuer: string | null;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  ended_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  end_reason: 'signed_out' | 'revoked' | 'idle' | 'disabled' | 'switched' | null;
  /** The provider's session id, the ID token's `sid`, when it sent one (migration 0342): what a back-channel logout names. */
  provider_session_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An MCP task (migration 0340, spec/mcp.md "MCP Tasks"): the durable handle of a tool call that would wait. */
export interface McpTasksTable {
  workspace_id: Generated<string>;
  id: string;
  principal_id: string;
  tool: string;
  input: ColumnType<Record<string, unknown>, string, string>;
  follows: 'wait' | 'approval';
  status: Generated<'working' | 'completed' | 'failed' | 'cancelled'>;
  result: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  wait_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp;
}

export interface AsksTable {
  id: string;
  task_id: string;
  question: string;
  options: Generated<AskOption[]>;
  /** Who is asked now: a principal, or (to_id null) every enabled human holding `to_role`. */
  to_id: string | null;
  to_role: Generated<'owner' | 'admin' | 'member' | 'viewer' | null>;
  /** Principal ids and `role:<role>` entries, in the order they are asked. */
  chain: string[];
  step: Generated<number>;
  timeout_s: number;
  due_at: Timestamp;
  default_answer: AskAnswer;
  asked_by_id: string;
  asked_by_kind: 'human' | 'agent';
  status: Generated<'open' | 'answered' | 'defaulted' | 'cancelled'>;
  answer: AskAnswer | null;
  answered_by_id: string | null;
  answered_by_kind: 'human' | 'agent' | 'system' | null;
  answered_at: Timestamp | null;
  created_at: Timestamp;
  overdue_at: Generated<Date | null>;
}

/** One choice of an ask: a short label, and the value an agent reads (the label when absent). */
export interface AskOption {
  label: string;
  value?: string;
}

/** What an ask was answered with: the text, and the option chosen when it had options. */
export interface AskAnswer {
  text: string;
  option?: string;
}

export type InboxKind = 'ask' | 'answer' | 'mention' | 'review' | 'assigned' | 'approval' | 'overdue' | 'budget' | 'reply' | 'changed' | 'to_review';
export type InboxState = 'unread' | 'read' | 'done';

export interface InboxItemsTable {
  id: string;
  principal_id: string;
  kind: InboxKind;
  task_id: string;
  ref_id: string;
  by_id: string;
  excerpt: Generated<string>;
  state: Generated<InboxState>;
  created_at: Timestamp;
  updated_at: Timestamp;
  overdue_at: Generated<Date | null>;
}

export type EmailPreference = 'immediate' | 'digest' | 'off';
export type NotificationChannel = 'email' | 'chat';

/** A person's notification choices (migrations/0210_notifications.sql); no row means the defaults. */
export interface NotificationPreferencesTable {
  principal_id: string;
  email: EmailPreference;
  chat: boolean;
  updated_at: Timestamp;
}

/** The notification outbox: one row per inbox item and channel. */
export interface NotificationsTable {
  inbox_item_id: string;
  channel: NotificationChannel;
  principal_id: string;
  digest: boolean;
  state: Generated<'pending' | 'sent' | 'failed' | 'skipped'>;
  attempt_count: Generated<number>;
  /** Each attempt as a webhook delivery records it; `status` is the SMTP reply code or HTTP status. */
  attempts: ColumnType<WebhookAttempt[], string | undefined, string>;
  next_attempt_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface NotificationLinksUsedTable {
  link_id: string;
  principal_id: string;
  used_at: Timestamp;
}

export interface ReservationsTable {
  id: string;
  /** What acquisitions serialize on: `resource:<name>` or `repo:<key>`. */
  lock_key: string;
  resource: string | null;
  repo: string | null;
  paths: string[] | null;
  mode: 'exclusive' | 'shared';
  holder_id: string;
  holder_kind: string;
  task_id: string | null;
  /** The task lease the reservation ends with, when it was taken for a task. */
  lease_id: string | null;
  /** The acquisition's number among its key's: a holder whose epoch is not live is stale. */
  epoch: number;
  ttl_s: number;
  acquired_at: Timestamp;
  renewed_at: Timestamp;
  expires_at: Timestamp;
  ended_at: Timestamp | null;
  end_reason: 'released' | 'expired' | 'lease_ended' | null;
  /** Taken by a claim of a task that requires it: no TTL of its own, it lives exactly as long as its lease. */
  follows_lease: Generated<boolean>;
}

/** A schedule's template: what templates_instantiate takes. */
export interface ScheduledTemplate {
  id: string;
  params?: Record<string, string | number>;
}

/** One reservation a task requires, as `task_reservations.requirements` keeps it. */
export interface ReservationRequirement {
  resource?: string;
  repo?: string;
  paths?: string[];
  /** Absent: exclusive. */
  mode?: 'exclusive' | 'shared' | undefined;
}

/** The reservations claiming a task takes with its lease (issue 42 §1). */
export interface TaskReservationsTable {
  task_id: string;
  requirements: ReservationRequirement[];
}

/** int8 columns: node-postgres answers them as strings (database.ts), PGlite as numbers. */
type Int8 = ColumnType<string | number, number | undefined, number>;

/** What a run (a lease) used, summed from the holder's reports (migrations/0170_runs.sql). */
export interface RunsTable {
  lease_id: string;
  input_tokens: Int8;
  output_tokens: Int8;
  cost_micros: Int8;
  currency: string | null;
  model: string | null;
  tool_calls: Int8;
  reports: Generated<number>;
  log_lines: Generated<number>;
  /** Why the run failed, when the failure was recorded (spec/runs.md "Failure codes"); a lapse is read from its lease. */
  failure_code: Generated<string | null>;
  updated_at: Timestamp;
}

export type RunLogLevel = 'info' | 'warn' | 'error';

export interface RunLogTable {
  lease_id: string;
  seq: number;
  at: Timestamp;
  level: RunLogLevel;
  line: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: Timestamp;
  created_by_id: string;
  /** Null: the server's default (migration 0290). */
  escalate_ask_s: number | null;
  escalate_approval_s: number | null;
  escalate_review_s: number | null;
  escalate_to: string[] | null;
  rate_limit: number | null;
  /** Its chat channel, a Slack-compatible incoming webhook (migration 0300); null: the server's. */
  chat_webhook_url: string | null;
  /** Days its events are kept (migration 0310); null: the server's BATON_EVENT_RETENTION_DAYS. */
  event_retention_days: number | null;
}

export interface DB {
  workspaces: WorkspacesTable;
  reservations: ReservationsTable;
  task_reservations: TaskReservationsTable;
  runs: RunsTable;
  run_log: RunLogTable;
  schedules: SchedulesTable;
  budgets: BudgetsTable;
  budget_spend: BudgetSpendTable;
  templates: TemplatesTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  agents: AgentsTable;
  tokens: TokensTable;
  tasks: TasksTable;
  leases: LeasesTable;
  approvals: ApprovalsTable;
  rate_counters: RateCountersTable;
  events: EventsTable;
  event_archives: EventArchivesTable;
  idempotency_keys: IdempotencyKeysTable;
  inbound_deliveries: InboundDeliveriesTable;
  billing_accounts: BillingAccountsTable;
  artifacts: ArtifactsTable;
  comments: CommentsTable;
  artifact_contents: ArtifactContentsTable;
  server_keys: ServerKeysTable;
  oidc_identities: OidcIdentitiesTable;
  sessions: SessionsTable;
  mcp_tasks: McpTasksTable;
  asks: AsksTable;
  inbox_items: InboxItemsTable;
  notification_preferences: NotificationPreferencesTable;
  notifications: NotificationsTable;
  notification_links_used: NotificationLinksUsedTable;
}
