import { Command, Option } from 'commander';
import type { OutputOf } from '../client/index.ts';
import type { Run } from './context.ts';

type Figures = OutputOf<'insight_get'>['totals'];

interface StatsOptions {
  from?: string;
  to?: string;
  by: 'none' | 'day' | 'agent' | 'label';
  agent?: string;
  label?: string;
}

/** Seconds as the largest unit that keeps it readable: 45s, 12m, 3.5h, 2.1d. */
function human(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.round(seconds / 360) / 10}h`;
  return `${Math.round(seconds / 8640) / 10}d`;
}
const pct = (rate: number | null) => (rate === null ? '-' : `${Math.round(rate * 1000) / 10}%`);
const cost = (f: Figures) => f.usage.cost.map((c) => `${c.amount} ${c.currency}`).join(', ') || '0';

/** One table row per group (or the totals): the figures a lead reads first. */
function row(key: string, f: Figures): string[] {
  return [
    key,
    String(f.tasks_done),
    `${human(f.cycle_time_s.p50)} / ${human(f.cycle_time_s.p90)}`,
    `${human(f.review_wait_s.p50)} / ${human(f.review_wait_s.p90)}`,
    pct(f.first_review.rate),
    `${f.runs.failed}/${f.runs.ended} ${pct(f.runs.failure_rate)}`,
    String(f.usage.input_tokens + f.usage.output_tokens),
    cost(f),
  ];
}

/** `baton stats`: the insight figures (insight_get) over a window of UTC days, as a table or JSON. */
export function statsCommand(run: Run): Command {
  return new Command('stats')
    .description('throughput, cycle time, review wait, first-pass approval, failures and usage over a window of UTC days (humans only)')
    .option('--from <day>', 'first UTC day, YYYY-MM-DD (default: 30 days before --to)')
    .option('--to <day>', 'the day after the last, YYYY-MM-DD (default: tomorrow)')
    .addOption(new Option('--by <grouping>', 'one row per day, agent or label').choices(['none', 'day', 'agent', 'label']).default('none'))
    .option('--agent <id>', 'only this principal')
    .option('--label <label>', 'only tasks with this label')
    .action(
      run(async (ctx, o: StatsOptions) => {
        const { client } = await ctx.connect();
        const got = await ctx.out.progress(
          'reading insight',
          client.insight.get({ ...(o.from ? { from: o.from } : {}), ...(o.to ? { to: o.to } : {}), by: o.by, ...(o.agent ? { agent: o.agent } : {}), ...(o.label ? { label: o.label } : {}) }),
        );
        if (ctx.out.json) return ctx.out.data(got);
        const rows = [...got.groups.map((g) => row(g.key, g.figures)), row('total', got.totals)];
        ctx.out.table(['', 'DONE', 'CYCLE p50/p90', 'REVIEW p50/p90', 'FIRST PASS', 'FAILED', 'TOKENS', 'COST'], rows);
        ctx.out.note(`${got.days} UTC days from ${got.from} up to ${got.to}${got.groups_truncated ? `; the ${got.groups.length} busiest groups shown` : ''}`);
      }),
    );
}
