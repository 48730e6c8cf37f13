import { z } from 'zod';
import type { LeaseRow } from '../../store/leases.ts';
import type { RunLogRow, RunUsageRow, UsageIncrement } from '../../store/runs.ts';
import { failureCode } from '../shared/failure-code.ts';
import { holderRef } from '../tasks/task-schema.ts';

/** One usage report: increments since the last one, all optional. */
export const usageInput = z.strictObject({
  input_tokens: z.int().min(0).max(1e9).optional(),
  output_tokens: z.int().min(0).max(1e9).optional(),
  cost: z.number().min(0).max(1e6).optional().describe('Money spent, in `currency` (default USD).'),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD').optional(),
  model: z.string().min(1).max(100).optional(),
  tool_calls: z.int().min(0).max(1e6).optional(),
});
export type UsageInput = z.infer<typeof usageInput>;

export function toIncrement(u: UsageInput): UsageIncrement {
  const cost = Math.round((u.cost ?? 0) * 1e6);
  return {
    input_tokens: u.input_tokens ?? 0,
    output_tokens: u.output_tokens ?? 0,
    cost_micros: cost,
    tool_calls: u.tool_calls ?? 0,
    currency: u.currency ?? (cost > 0 ? 'USD' : undefined),
    model: u.model,
  };
}

export const RUN_OUTCOMES = ['running', 'released', 'lapsed', 'ended'] as const;

export const usageOutput = z.object({
  input_tokens: z.int(),
  output_tokens: z.int(),
  cost: z.number().describe('In `currency`, to the micro-unit.'),
  currency: z.string().nullable(),
  model: z.string().nullable().describe('The last model reported.'),
  tool_calls: z.int(),
  reports: z.int(),
});

export const runOutput = z.object({
  id: z.string().describe("The lease's id: a run is one lease."),
  task_id: z.string(),
  holder: holderRef,
  machine: z.string().nullable(),
  outcome: z.enum(RUN_OUTCOMES).describe('`running`; `released` (given back); `lapsed` (expired); `ended` (handed in, or the task moved on).'),
  started_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
  failure_code: failureCode.nullable().describe('Why the run failed (`lapsed`, or `cancelled` with its task); null if it did not.'),
  usage: usageOutput,
  log_lines: z.int(),
});
export type Run = z.infer<typeof runOutput>;

export const runLogLine = z.object({ seq: z.int(), at: z.iso.datetime(), level: z.enum(['info', 'warn', 'error']), line: z.string() });

const num = (v: string | number) => Number(v);

export function toUsage(row: RunUsageRow | undefined): z.infer<typeof usageOutput> {
  if (!row) return { input_tokens: 0, output_tokens: 0, cost: 0, currency: null, model: null, tool_calls: 0, reports: 0 };
  return {
    input_tokens: num(row.input_tokens),
    output_tokens: num(row.output_tokens),
    cost: num(row.cost_micros) / 1e6,
    currency: row.currency,
    model: row.model,
    tool_calls: num(row.tool_calls),
    reports: row.reports,
  };
}

/** The run as served; an active lease past its expiry reads as lapsed, as the lease does. */
export function toRun(lease: LeaseRow, usage: RunUsageRow | undefined, now: Date): Run {
  const lapsed = lease.state === 'expired' || (lease.state === 'active' && lease.expires_at <= now);
  const outcome = lapsed ? 'lapsed' : lease.state === 'released' || lease.state === 'ended' ? lease.state : 'running';
  const endedAt = lease.state === 'active' ? (lapsed ? lease.expires_at : null) : (lease.ended_at ?? lease.expires_at);
  return {
    id: lease.id,
    task_id: lease.task_id,
    holder: { id: lease.holder_id, kind: lease.holder_kind },
    machine: lease.machine,
    outcome,
    started_at: lease.acquired_at.toISOString(),
    ended_at: endedAt?.toISOString() ?? null,
    failure_code: lapsed ? 'lapsed' : (usage?.failure_code ?? null),
    usage: toUsage(usage),
    log_lines: usage?.log_lines ?? 0,
  };
}

export function toLogLine(row: RunLogRow): z.infer<typeof runLogLine> {
  return { seq: row.seq, at: row.at.toISOString(), level: row.level, line: row.line };
}
