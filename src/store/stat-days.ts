import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/**
 * The duration buckets' lower edges, in seconds, as `baton_stat_bucket` (migration 0180) has them:
 * bucket i (from 0) holds [edge i, edge i+1); the last is open.
 */
export const DURATION_EDGES_S = [
  0, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400, 172800, 259200, 432000, 604800, 1209600, 2592000, 5184000, 7776000,
] as const;

/** Which rollup rows a read sums: everyone's, one agent's, or one label's. */
export type StatDimension = { dim: 'all' } | { dim: 'agent'; key: string } | { dim: 'label'; key: string };

/** How a read groups its sums: not at all, by day, or by each key of the dimension (every agent, every label). */
export type StatGrouping = 'none' | 'day' | 'agent' | 'label';

/** One metric's sums within one group: how many, their total, and per-bucket counts for a duration. */
export interface MetricSum {
  n: number;
  total: number;
  buckets: number[] | undefined;
}

/** Sums per group key ('' when ungrouped; a UTC date; an agent id; a label), then per metric. */
export type StatSums = Map<string, Map<string, MetricSum>>;

/** The bucket columns of `stat_days`, b01 … b21, one per edge. */
const BUCKET_SUMS = sql.raw(DURATION_EDGES_S.map((_, i) => `sum(b${String(i + 1).padStart(2, '0')})::int`).join(', '));

/**
 * Sums the rollup rows of the UTC days [from, to) per group and metric, in the database: one indexed
 * range read of `stat_days` on its (dim, day) key, never tasks or events, so its cost grows with
 * days × keys × metrics, not with history; it answers one row per group and metric.
 */
export async function sumStatDays(db: Kysely<DB>, q: { from: string; to: string; filter: StatDimension; by: StatGrouping }): Promise<StatSums> {
  const dim = q.by === 'agent' || q.by === 'label' ? q.by : q.filter.dim;
  const key = q.by === 'agent' || q.by === 'label' || q.filter.dim === 'all' ? undefined : q.filter.key;
  const group = q.by === 'day' ? sql`to_char(day, 'YYYY-MM-DD')` : q.by === 'none' ? sql`''` : sql`key`;
  const { rows } = await sql<{ g: string; metric: string; n: string; total: string; buckets: number[] }>`
    SELECT ${group} AS g, metric, sum(n)::text AS n, sum(total)::text AS total, ARRAY[${BUCKET_SUMS}] AS buckets FROM stat_days
    WHERE dim = ${dim} AND day >= ${q.from}::date AND day < ${q.to}::date ${key === undefined ? sql`` : sql`AND key = ${key}`}
    GROUP BY 1, 2
  `.execute(db);
  const sums: StatSums = new Map<string, Map<string, MetricSum>>();
  for (const row of rows) {
    let byMetric = sums.get(row.g);
    if (!byMetric) sums.set(row.g, (byMetric = new Map<string, MetricSum>()));
    addSum(byMetric, row.metric, { n: Number(row.n), total: Number(row.total), buckets: row.buckets.map(Number) });
  }
  return sums;
}

/** Adds `sum` into `into`'s entry for `metric`. */
function addSum(into: Map<string, MetricSum>, metric: string, sum: MetricSum): void {
  const had = into.get(metric);
  if (!had) {
    into.set(metric, { n: sum.n, total: sum.total, buckets: sum.buckets ? [...sum.buckets] : undefined });
    return;
  }
  had.n += sum.n;
  had.total += sum.total;
  if (sum.buckets) {
    had.buckets ??= new Array<number>(DURATION_EDGES_S.length).fill(0);
    for (let i = 0; i < sum.buckets.length; i++) had.buckets[i] = (had.buckets[i] ?? 0) + (sum.buckets[i] ?? 0);
  }
}

/** Every group's sums added into one (the totals of a by-day read, which holds every row of the window). */
export function mergeStatSums(sums: StatSums): Map<string, MetricSum> {
  const merged = new Map<string, MetricSum>();
  for (const byMetric of sums.values()) for (const [metric, sum] of byMetric) addSum(merged, metric, sum);
  return merged;
}
