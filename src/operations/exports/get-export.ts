import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { latestSeq, listEventsInWindow } from '../../store/events.ts';
import { listRunsInWindow } from '../../store/runs.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, nextCursorOutput, paginate, syncCursorOutput } from '../shared/lists.ts';
import { EXPORT_COLUMNS, EXPORT_DATASETS, type ExportDataset, exportRow, toEventRow, toRunRow, toUsageRow } from './export-rows.ts';

/** A UTC day or a date-time with its offset; checked as a time in `run` (a pattern keeps the OpenAPI document small). */
const instant = z.string().regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/, 'must be a day (YYYY-MM-DD) or a date-time with offset');

function invalid(member: string, detail: string): BatonError {
  return new BatonError('invalid_parameter', `${member}: ${detail}`, { extra: { errors: [{ pointer: `/${member}`, detail, location: 'query' }] } });
}

function instantOf(member: string, value: string): Date {
  const at = new Date(value);
  // A day that does not exist (2026-02-30) parses to nothing or to another day.
  if (Number.isNaN(at.getTime()) || (value.length === 10 && at.toISOString().slice(0, 10) !== value)) throw invalid(member, `${value} is not a time`);
  return at;
}

export const getExport = defineOperation({
  name: 'exports_get',
  summary: 'Export runs, usage or events of a time window for audit and finance, a page at a time.',
  description: 'Admins and owners. REST with `Accept: application/x-ndjson` or `text/csv` streams the whole window (spec/runs.md, "Export").',
  kind: 'read',
  staleReads: true,
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/exports/{dataset}', download: true },
  input: z.strictObject({
    dataset: z.enum(EXPORT_DATASETS),
    from: instant.describe('Start (inclusive): a UTC day or a date-time.'),
    to: instant.describe('End (exclusive).'),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: z.object({
    dataset: z.enum(EXPORT_DATASETS),
    columns: z.array(z.string()).max(50).describe("The CSV header: each row's members, in order."),
    data: z.array(exportRow).max(100),
    has_more: z.boolean(),
    next_cursor: nextCursorOutput,
    // Every list page carries one; a window is fixed, so there is nothing to follow with `since`.
    sync_cursor: syncCursorOutput.describe('Always null: an export reads a fixed window (lists carry an event id here).'),
  }),
  async run(db, ctx, input) {
    const from = instantOf('from', input.from);
    const to = instantOf('to', input.to);
    if (to <= from) throw invalid('to', `must be after from (${input.from})`);
    const dataset: ExportDataset = input.dataset;
    const position = ctx.cursors.decode('exports', input.cursor)?.split(' ');
    if (position && position[0] !== dataset) throw invalid('cursor', `it continues a ${position[0]} export, not ${dataset}`);
    const page = { dataset, columns: [...EXPORT_COLUMNS[dataset]], sync_cursor: null as string | null };
    if (dataset === 'events') {
      const throughSeq = position?.[2] ?? (await latestSeq(db));
      const rows = await listEventsInWindow(db, { from, to, afterSeq: position?.[1], throughSeq, limit: input.limit });
      const { rows: kept, ...rest } = paginate(rows, input.limit, (row) => ctx.cursors.encode('exports', `events ${row.seq} ${throughSeq}`));
      return { ...page, data: kept.map(toEventRow), ...rest };
    }
    const rows = await listRunsInWindow(db, { from, to, afterId: position?.[1], reported: dataset === 'usage', limit: input.limit });
    const { rows: kept, ...rest } = paginate(rows, input.limit, (row) => ctx.cursors.encode('exports', `${dataset} ${row.lease.id}`));
    const toRow = dataset === 'usage' ? toUsageRow : toRunRow;
    return { ...page, data: kept.map((row) => toRow(row, ctx.now)), ...rest };
  },
});
