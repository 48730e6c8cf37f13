/**
 * The growth chart: p99 of each request kind against the number of tasks, as an SVG (log scale on
 * both axes, so a flat line means a flat cost). bench/growth.ts calls `renderChart` after a full
 * run; `node bench/growth-chart.ts` redraws bench/growth.svg from bench/growth.json.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export interface GrowthResults {
  sizes: number[];
  /** Per size (as a string), per request kind: milliseconds. */
  bySize: Record<string, Record<string, { p50: number; p99: number }>>;
}

const WIDTH = 760;
const HEIGHT = 420;
const PLOT = { left: 70, right: 260, top: 30, bottom: 50 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function renderChart(results: GrowthResults): string {
  const kinds = Object.keys(results.bySize[String(results.sizes[0])] ?? {});
  const values = results.sizes.flatMap((n) => kinds.map((k) => results.bySize[String(n)]?.[k]?.p99 ?? Number.NaN)).filter(Number.isFinite);
  const yMin = Math.log10(Math.max(0.1, Math.min(...values) / 1.5));
  const yMax = Math.log10(Math.max(...values) * 1.5);
  const xMin = Math.log10(Math.min(...results.sizes));
  const xMax = Math.log10(Math.max(...results.sizes));
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const x = (n: number) => PLOT.left + ((Math.log10(n) - xMin) / (xMax - xMin || 1)) * plotWidth;
  const y = (ms: number) => PLOT.top + (1 - (Math.log10(ms) - yMin) / (yMax - yMin || 1)) * plotHeight;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${PLOT.left}" y="18" font-size="14" font-weight="bold">p99 latency (ms) by number of tasks, ten events each</text>`,
  ];
  for (let exp = Math.floor(yMin); exp <= Math.floor(yMax); exp++) {
    for (const mantissa of [1, 2, 5]) {
      const ms = mantissa * 10 ** exp;
      if (Math.log10(ms) < yMin || Math.log10(ms) > yMax) continue;
      parts.push(`<line x1="${PLOT.left}" x2="${PLOT.left + plotWidth}" y1="${y(ms).toFixed(1)}" y2="${y(ms).toFixed(1)}" stroke="#e5e5e5"/>`);
      parts.push(`<text x="${PLOT.left - 8}" y="${(y(ms) + 4).toFixed(1)}" text-anchor="end">${ms}</text>`);
    }
  }
  for (const n of results.sizes) {
    parts.push(`<line x1="${x(n).toFixed(1)}" x2="${x(n).toFixed(1)}" y1="${PLOT.top}" y2="${PLOT.top + plotHeight}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${x(n).toFixed(1)}" y="${PLOT.top + plotHeight + 20}" text-anchor="middle">${n.toLocaleString('en')}</text>`);
  }
  parts.push(`<text x="${PLOT.left + plotWidth / 2}" y="${HEIGHT - 8}" text-anchor="middle">tasks (log scale)</text>`);
  kinds.forEach((kind, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const points = results.sizes
      .map((n) => [n, results.bySize[String(n)]?.[kind]?.p99] as const)
      .filter((p): p is readonly [number, number] => p[1] !== undefined && Number.isFinite(p[1]));
    parts.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map(([n, ms]) => `${x(n).toFixed(1)},${y(ms).toFixed(1)}`).join(' ')}"/>`);
    for (const [n, ms] of points) parts.push(`<circle cx="${x(n).toFixed(1)}" cy="${y(ms).toFixed(1)}" r="3" fill="${colour}"/>`);
    const legendY = PLOT.top + 10 + i * 20;
    parts.push(`<line x1="${WIDTH - PLOT.right + 20}" x2="${WIDTH - PLOT.right + 40}" y1="${legendY}" y2="${legendY}" stroke="${colour}" stroke-width="2"/>`);
    parts.push(`<text x="${WIDTH - PLOT.right + 46}" y="${legendY + 4}">${escape(kind)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = JSON.parse(await readFile(new URL('growth.json', import.meta.url), 'utf8')) as GrowthResults;
  await writeFile(new URL('growth.svg', import.meta.url), renderChart(results));
}
