import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { mergeStatSums, sumStatDays, type StatDimension } from '../../store/stat-days.ts';
import { defineOperation } from '../define-operation.ts';
import { statFigures, toFigures } from './insight-figures.ts';

const DAY_MS = 86_400_000;
/** The widest window one call sums (spec/analytics.md): a quarter, so a read stays within its time budget. */
export const INSIGHT_MAX_DAYS = 92;
/** The most groups one call returns for `by=agent` or `by=label`, the busiest first. */
export const INSIGHT_MAX_GROUPS = 200;
const DEFAULT_DAYS = 30;

const utcDay = (d: Date) => d.toISOString().slice(0, 10);
/** A UTC day; checked as a date in `run` (a plain pattern keeps the OpenAPI document small). */
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day, YYYY-MM-DD');

function invalid(pointer: string, detail: string): BatonError {
  return new BatonError('invalid_parameter', `${pointer.slice(1)}: ${detail}`, { extra: { errors: [{ pointer, detail, location: 'query' }] } });
}

export const getInsight = defineOperation({
  name: 'insight_get',
  summary: 'Throughput, cycle and review times, first-pass approval, failures and usage over a window of UTC days.',
  description: `Humans only. Days [from, to), at most ${INSIGHT_MAX_DAYS} (default ${DEFAULT_DAYS}); spec/analytics.md.`,
  kind: 'read',
  staleReads: true,
  scope: 'tasks:read',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/insight' },
  input: z.strictObject({
    from: day.optional().describe('First UTC day.'),
    to: day.optional().describe('Exclusive (default: tomorrow).'),
    by: z.enum(['none', 'day', 'agent', 'label']).default('none'),
    agent: z.string().min(1).max(64).optional().describe('Only this principal.'),
    label: z.string().min(1).max(64).optional().describe('Only this label.'),
  }),
  output: z.object({
    from: z.string(),
    to: z.string(),
    days: z.int(),
    totals: statFigures,
    groups: z
      .array(z.object({ key: z.string(), figures: statFigures }))
      .max(INSIGHT_MAX_GROUPS),
    groups_truncated: z.boolean(),
  }),
  async run(db, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', "Insight is for humans: it shows every agent's pace and spending.");
    const to = input.to ?? utcDay(new Date(ctx.now.getTime() + DAY_MS));
    const from = input.from ?? utcDay(new Date(Date.parse(to) - DEFAULT_DAYS * DAY_MS));
    for (const [member, value] of [['/from', from], ['/to', to]] as const) {
      if (Number.isNaN(Date.parse(value)) || utcDay(new Date(Date.parse(value))) !== value) throw invalid(member, `${value} is not a day`);
    }
    const days = Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS);
    if (days < 1) throw invalid('/from', `must be before to (${to})`);
    if (days > INSIGHT_MAX_DAYS) throw invalid('/from', `the window is at most ${INSIGHT_MAX_DAYS} days; ${from} to ${to} is ${days}`);
    if (input.agent !== undefined && input.label !== undefined) throw invalid('/label', 'give agent or label, not both');
    if ((input.agent !== undefined || input.label !== undefined) && (input.by === 'agent' || input.by === 'label')) {
      throw invalid('/by', 'with an agent or label filter, by is none or day');
    }
    const filter: StatDimension =
      input.agent !== undefined ? { dim: 'agent', key: input.agent } : input.label !== undefined ? { dim: 'label', key: input.label } : { dim: 'all' };
    // By day, the groups hold every row of the window, so the totals are their sum; otherwise one more read.
    const grouped = input.by === 'none' ? undefined : await sumStatDays(db, { from, to, filter, by: input.by });
    const totals = grouped && input.by === 'day' ? mergeStatSums(grouped) : (await sumStatDays(db, { from, to, filter, by: 'none' })).get('');
    const groups = [...(grouped ?? [])].map(([key, sums]) => ({ key, figures: toFigures(sums, input.by === 'day' ? 1 : days) }));
    if (input.by === 'day') groups.sort((a, b) => a.key.localeCompare(b.key));
    else groups.sort((a, b) => b.figures.tasks_done - a.figures.tasks_done || b.figures.runs.ended - a.figures.runs.ended || a.key.localeCompare(b.key));
    return {
      from,
      to,
      days,
      totals: toFigures(totals, days),
      groups: groups.slice(0, INSIGHT_MAX_GROUPS),
      groups_truncated: groups.length > INSIGHT_MAX_GROUPS,
    };
  },
});
