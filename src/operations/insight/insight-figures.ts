import { z } from 'zod';
import { TASK_STATUSES, type TaskStatus } from '../../domain/task-status.ts';
import { DURATION_EDGES_S, type MetricSum } from '../../store/stat-days.ts';

/**
 * A percentile from bucket counts (spec/analytics.md, "Percentiles"): the value of rank
 * ceil(p × count), placed inside its bucket by linear interpolation at the middle of its share,
 * lo + (hi − lo) × (rank − below − ½) / in_bucket; in the open last bucket, its lower edge.
 * Exact to within the bucket that holds the true value.
 */
export function percentile(buckets: readonly number[], p: number): number | null {
  const count = buckets.reduce((a, b) => a + b, 0);
  if (count === 0) return null;
  const rank = Math.max(1, Math.ceil(p * count));
  let below = 0;
  for (let i = 0; i < buckets.length; i++) {
    const inBucket = buckets[i] ?? 0;
    if (below + inBucket >= rank) {
      const lo = DURATION_EDGES_S[i] ?? 0;
      const hi = DURATION_EDGES_S[i + 1];
      if (hi === undefined) return lo;
      return Math.round(lo + ((hi - lo) * (rank - below - 0.5)) / inBucket);
    }
    below += inBucket;
  }
  return null;
}

/** Seconds: how many stays, their exact mean, and bucket percentiles (null when none). */
export const insightDuration = z.object({ count: z.int(), mean: z.number().nullable(), p50: z.number().nullable(), p90: z.number().nullable() });
const duration = insightDuration;
type Duration = z.infer<typeof duration>;

const money = z.object({ currency: z.string(), amount: z.number() });

/** The figures of one window (or one group of it); spec/analytics.md says what each counts. */
export const statFigures = z.object({
  tasks_done: z.int(),
  done_per_day: z.number(),
  cycle_time_s: duration,
  lead_time_s: duration,
  review_wait_s: duration,
  time_in_status_s: z.object(Object.fromEntries(TASK_STATUSES.map((s) => [s, duration])) as Record<TaskStatus, typeof duration>),
  first_review: z.object({ decided: z.int(), approved: z.int(), rate: z.number().nullable() }),
  runs: z.object({
    ended: z.int(),
    failed: z.int(),
    failure_rate: z.number().nullable(),
    duration_s: duration,
    failures: z.array(z.object({ code: z.string(), count: z.int() })).max(50),
  }),
  usage: z.object({
    input_tokens: z.int(),
    output_tokens: z.int(),
    tool_calls: z.int(),
    cost: z.array(money).max(20),
    per_done_task: z
      .object({ input_tokens: z.number(), output_tokens: z.number(), cost: z.array(money).max(20) })
      .nullable(),
  }),
});
export type StatFigures = z.infer<typeof statFigures>;

const NONE: MetricSum = { n: 0, total: 0, buckets: undefined };

function toDuration(sum: MetricSum | undefined): Duration {
  const s = sum ?? NONE;
  if (s.n === 0) return { count: 0, mean: null, p50: null, p90: null };
  const buckets = s.buckets ?? [];
  return { count: s.n, mean: Math.round(s.total / s.n), p50: percentile(buckets, 0.5), p90: percentile(buckets, 0.9) };
}

const ratio = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 10000) / 10000);
const micros = (n: number) => Math.round(n) / 1e6;

/** Days counted before failure codes (migration 0220) kept the failure's kind: read as the code it stands for. */
const LEGACY_CODES: Readonly<Record<string, string>> = { expired: 'lapsed', failed: 'unspecified', unknown: 'unspecified' };

/** The figures from one group's metric sums over a window of `days` days. */
export function toFigures(sums: ReadonlyMap<string, MetricSum> | undefined, days: number): StatFigures {
  const get = (metric: string) => sums?.get(metric) ?? NONE;
  const done = get('done').n;
  const byCode = new Map<string, number>();
  const cost: { currency: string; amount: number }[] = [];
  for (const [metric, sum] of sums ?? []) {
    if (metric.startsWith('fail:')) {
      const code = LEGACY_CODES[metric.slice(5)] ?? metric.slice(5);
      byCode.set(code, (byCode.get(code) ?? 0) + sum.n);
    } else if (metric.startsWith('cost:')) cost.push({ currency: metric.slice(5), amount: micros(sum.total) });
  }
  const failures = [...byCode].map(([code, count]) => ({ code, count }));
  failures.sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
  cost.sort((a, b) => a.currency.localeCompare(b.currency));
  const failed = failures.reduce((a, f) => a + f.count, 0);
  const ended = get('runs').n;
  const input = get('input_tokens').total;
  const output = get('output_tokens').total;
  return {
    tasks_done: done,
    done_per_day: Math.round((done / days) * 100) / 100,
    cycle_time_s: toDuration(get('cycle')),
    lead_time_s: toDuration(get('lead')),
    review_wait_s: toDuration(get('review_wait')),
    time_in_status_s: Object.fromEntries(TASK_STATUSES.map((s) => [s, toDuration(get(`in:${s}`))])) as Record<TaskStatus, Duration>,
    first_review: { decided: get('first_review').n, approved: get('first_pass').n, rate: ratio(get('first_pass').n, get('first_review').n) },
    runs: { ended, failed, failure_rate: ratio(failed, ended), duration_s: toDuration(get('runs')), failures: failures.slice(0, 50) },
    usage: {
      input_tokens: input,
      output_tokens: output,
      tool_calls: get('tool_calls').total,
      cost: cost.slice(0, 20),
      per_done_task:
        done === 0
          ? null
          : {
              input_tokens: Math.round((input / done) * 100) / 100,
              output_tokens: Math.round((output / done) * 100) / 100,
              cost: cost.slice(0, 20).map((c) => ({ currency: c.currency, amount: Math.round((c.amount / done) * 1e6) / 1e6 })),
            },
    },
  };
}
