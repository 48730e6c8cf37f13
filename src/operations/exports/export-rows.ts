import { z } from 'zod';
import type { EventRow } from '../../store/events.ts';
import type { RunRow } from '../../store/runs.ts';
import { toRun } from '../runs/run-schema.ts';

/** What an export reads (spec/runs.md, "Export"). */
export const EXPORT_DATASETS = ['runs', 'usage', 'events'] as const;
export type ExportDataset = (typeof EXPORT_DATASETS)[number];

const time = z.iso.datetime();
const timeOrNull = time.nullable();

/** One run (one lease): flat, so a CSV row holds it. */
const runRow = z.object({
  id: z.string(),
  task_id: z.string(),
  agent_id: z.string(),
  agent_kind: z.string(),
  machine: z.string().nullable(),
  outcome: z.string(),
  started_at: time,
  ended_at: timeOrNull,
  duration_s: z.int().nullable(),
  log_lines: z.int(),
});

/** What one run used, in its one currency. */
const usageRow = z.object({
  run_id: z.string(),
  task_id: z.string(),
  agent_id: z.string(),
  started_at: time,
  ended_at: timeOrNull,
  model: z.string().nullable(),
  currency: z.string().nullable(),
  input_tokens: z.int(),
  output_tokens: z.int(),
  tool_calls: z.int(),
  cost: z.number(),
  reports: z.int(),
});

/** One event, its `data` as JSON (as text in CSV). */
const eventRow = z.object({
  id: z.string(),
  created_at: time,
  type: z.string(),
  subject: z.string(),
  actor_id: z.string(),
  actor_kind: z.string(),
  token_id: z.string().nullable(),
  machine: z.string().nullable(),
  approval_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
});

export const exportRow = z.union([runRow, usageRow, eventRow]);
type RunExportRow = z.infer<typeof runRow>;
type UsageExportRow = z.infer<typeof usageRow>;
type EventExportRow = z.infer<typeof eventRow>;

/** Each dataset's columns, in order: the CSV header, and the members of each row. */
export const EXPORT_COLUMNS: Record<ExportDataset, readonly string[]> = {
  runs: Object.keys(runRow.shape),
  usage: Object.keys(usageRow.shape),
  events: Object.keys(eventRow.shape),
};

export function toRunRow(row: RunRow, now: Date): RunExportRow {
  const run = toRun(row.lease, row.usage, now);
  return {
    id: run.id,
    task_id: run.task_id,
    agent_id: run.holder.id,
    agent_kind: run.holder.kind,
    machine: run.machine,
    outcome: run.outcome,
    started_at: run.started_at,
    ended_at: run.ended_at,
    duration_s: run.ended_at === null ? null : Math.round((Date.parse(run.ended_at) - Date.parse(run.started_at)) / 1000),
    log_lines: run.log_lines,
  };
}

export function toUsageRow(row: RunRow, now: Date): UsageExportRow {
  const run = toRun(row.lease, row.usage, now);
  const { usage } = run;
  return {
    run_id: run.id,
    task_id: run.task_id,
    agent_id: run.holder.id,
    started_at: run.started_at,
    ended_at: run.ended_at,
    model: usage.model,
    currency: usage.currency,
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    tool_calls: usage.tool_calls,
    cost: usage.cost,
    reports: usage.reports,
  };
}

export function toEventRow(row: EventRow): EventExportRow {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    type: row.type,
    subject: row.subject,
    actor_id: row.actor_id,
    actor_kind: row.actor_kind,
    token_id: row.token_id,
    machine: row.machine,
    approval_id: row.approval_id,
    data: row.data as Record<string, unknown>,
  };
}
