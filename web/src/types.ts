/** The shapes the app reads, as served by /api/v1 (see /spec/domain-model.md). */

export type ActorKind = 'human' | 'agent' | 'system';
export interface Actor {
  id: string;
  kind: ActorKind;
}

export const STATUSES = ['todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled'] as const;
export type Status = (typeof STATUSES)[number];
export const PRIORITIES = ['urgent', 'high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface Lease {
  id: string;
  holder: Actor;
  epoch: number;
  expires_at: string;
}

/** An artifact reference, when the server attaches them to tasks. */
export interface ArtifactRef {
  id: string;
  size: number;
  content_type: string;
  sha256: string;
  href: string;
  name?: string;
}

export interface Task {
  id: string;
  title: string;
  status: Status;
  priority: Priority;
  labels: string[];
  version: number;
  lease: Lease | null;
  waiting_on: string[];
  updated_at: string;
  legal_transitions: Status[];
  description?: string;
  blocked_by?: string[];
  created_at?: string;
  created_by?: Actor;
  updated_by?: Actor;
  deleted_at?: string | null;
  artifacts?: ArtifactRef[];
  artifact?: ArtifactRef | null;
  /** Subtasks (spec/collaboration.md#subtasks): on list items only when set. */
  parent_id?: string | null;
  children?: Record<Status, number>;
  due_at?: string | null;
  overdue?: boolean;
  /** Asks on it waiting for a human's answer (spec/asks.md): only when there are any. */
  open_asks?: number;
  /** Of those, past their SLA (spec/asks.md, Escalation); only when there are any. */
  overdue_asks?: number;
  /** In review past its SLA; only when true. */
  review_overdue?: true;
  not_before?: string | null;
  /** Failed attempts (spec/collaboration.md#attempts-and-the-dead-letter): on list items only once one failed. */
  attempts?: number;
  max_attempts?: number | null;
  blocked_reason?: string | null;
  /** Who the task is for: on list items only when set. */
  assignee?: { id: string; kind: 'human' | 'agent' } | null;
}

export interface BatonEvent {
  id: string;
  type: string;
  subject: string;
  actor: Actor;
  data: Record<string, unknown>;
  created_at: string;
  machine?: string | null;
}

export interface Approval {
  id: string;
  status: 'pending' | 'approved' | 'denied' | 'failed' | 'expired';
  operation: string;
  input: Record<string, unknown>;
  target: { id: string; version: number } | null;
  requested_by: Actor;
  requested_machine: string;
  decided_by: Actor | null;
  decided_at: string | null;
  reason: string | null;
  result: { status: number; body: unknown } | null;
  expires_at: string;
  created_at: string;
  /** When it went past its SLA (spec/asks.md, Escalation). */
  overdue_at?: string;
}

export interface Agent {
  id: string;
  name: string;
  kind: 'human' | 'agent';
  scopes: string[];
  tool_allowlist: string[] | null;
  disabled: boolean;
  rate_limit: number | null;
  version: number;
  created_at: string;
}

export interface Token {
  id: string;
  agent_id: string;
  machine: string;
  prefix: string;
  scopes: string[];
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
  token?: string | null;
}

export interface Whoami {
  principal: { id: string; kind: 'human' | 'agent'; name: string };
  token: { id: string; machine: string };
  scopes: string[];
  can: string[];
}

/** One of the caller's workspaces (GET /workspaces); `current` is the one this session acts in. */
export interface Workspace {
  id: string;
  name: string;
  current: boolean;
  created_at: string;
}

export interface Manifest {
  auth: { scopes: string[] };
  attempts: { default_max_attempts: number; backoff_s: number[] };
  operations: { name: string; summary: string; method: string; path: string }[];
}

/** A run: one lease, with what it used (spec/runs.md). */
export interface Run {
  id: string;
  task_id: string;
  holder: Actor;
  machine: string | null;
  outcome: 'running' | 'released' | 'lapsed' | 'ended';
  started_at: string;
  ended_at: string | null;
  usage: { input_tokens: number; output_tokens: number; cost: number; currency: string | null; model: string | null; tool_calls: number; reports: number };
  log_lines: number;
  log?: { seq: number; at: string; level: 'info' | 'warn' | 'error'; line: string }[];
}

/** A duration's figures in seconds (spec/analytics.md): null when nothing was counted. */
export interface InsightDuration {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
}

export interface Money {
  currency: string;
  amount: number;
}

/** The figures of a window or of one group of it (`insight_get`). */
export interface InsightFigures {
  tasks_done: number;
  done_per_day: number;
  cycle_time_s: InsightDuration;
  lead_time_s: InsightDuration;
  review_wait_s: InsightDuration;
  time_in_status_s: Record<Status, InsightDuration>;
  first_review: { decided: number; approved: number; rate: number | null };
  runs: { ended: number; failed: number; failure_rate: number | null; duration_s: InsightDuration; failures: { code: string; count: number }[] };
  usage: { input_tokens: number; output_tokens: number; tool_calls: number; cost: Money[] };
}

export interface Insight {
  from: string;
  to: string;
  days: number;
  totals: InsightFigures;
  groups: { key: string; figures: InsightFigures }[];
  groups_truncated: boolean;
}

/** A budget with what its current window spent (spec/runs.md#budgets). */
export interface Budget {
  id: string;
  name: string;
  applies_to: 'agent' | 'label' | 'task' | 'workspace';
  target: string;
  unit: 'cost' | 'tokens' | 'runs';
  currency: string | null;
  period: 'day' | 'week' | 'month' | 'lifetime';
  limit: number;
  spent: number;
  state: 'ok' | 'warned' | 'exhausted';
  resets_at: string | null;
}
