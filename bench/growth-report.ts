/** The tables bench/growth.ts prints and writes to bench/GROWTH.md. */
import type { GrowthResults } from './growth-chart.ts';
import type { PlanReading } from './growth-plans.ts';

/** The most a p99 at the largest size may be, as a multiple of its p99 at the smallest (issue 26). */
export const TARGET = 1.5;

export type Readings = Record<string, Record<string, PlanReading>>;
export type Cache = Record<string, { bytes: number; hit: number; read: number }>;

const sizeName = (n: number) => n.toLocaleString('en');

export function latencyTable(results: GrowthResults): string {
  const sizes = results.sizes;
  const first = sizes[0] ?? 0;
  const last = sizes.at(-1) ?? 0;
  const head = `| request | ${sizes.map((n) => `${sizeName(n)} p50 / p99 ms`).join(' | ')} | p99 ratio ${sizeName(last)} / ${sizeName(first)} |`;
  const rule = `|---|${sizes.map(() => '---:').join('|')}|---:|`;
  const rows = Object.keys(results.bySize[String(first)] ?? {}).map((kind) => {
    const cells = sizes.map((n) => {
      const r = results.bySize[String(n)]?.[kind];
      return r ? `${r.p50.toFixed(1)} / ${r.p99.toFixed(1)}` : '–';
    });
    const ratio = (results.bySize[String(last)]?.[kind]?.p99 ?? Number.NaN) / (results.bySize[String(first)]?.[kind]?.p99 ?? Number.NaN);
    return `| ${kind} | ${cells.join(' | ')} | ${ratio.toFixed(2)}${ratio > TARGET ? ' (over 1.5)' : ''} |`;
  });
  return [head, rule, ...rows].join('\n');
}

/** Shared buffers touched per request at each size, and whether every size got the same plans. */
export function planTable(sizes: readonly number[], plans: Readings): string {
  const head = `| request | ${sizes.map((n) => `${sizeName(n)}: buffers`).join(' | ')} | same plans at every size |`;
  const rule = `|---|${sizes.map(() => '---:').join('|')}|---|`;
  const rows = Object.entries(plans).map(([kind, bySize]) => {
    const readings = sizes.map((n) => bySize[String(n)]);
    const same = new Set(readings.map((r) => r?.shape)).size === 1;
    return `| ${kind} | ${readings.map((r) => (r ? String(r.buffers) : '–')).join(' | ')} | ${same ? 'yes' : 'no'} |`;
  });
  return [head, rule, ...rows].join('\n');
}

export function cacheTable(sizes: readonly number[], cache: Cache): string {
  const rows = sizes.map((n) => {
    const c = cache[String(n)];
    if (!c) return `| ${sizeName(n)} | – | – | – |`;
    return `| ${sizeName(n)} | ${(c.bytes / 2 ** 20).toFixed(0)} MiB | ${c.read.toLocaleString('en')} | ${((100 * c.hit) / (c.hit + c.read || 1)).toFixed(2)} % |`;
  });
  return ['| tasks | database size | blocks read from outside shared_buffers while timed | shared_buffers hit ratio |', '|---:|---:|---:|---:|', ...rows].join('\n');
}
