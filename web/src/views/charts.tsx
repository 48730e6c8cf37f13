import type { ComponentChildren } from 'preact';

/**
 * Small charts drawn as plain SVG (no chart library: the app's JavaScript budget is 100 KB). The
 * drawing is hidden from assistive technology; the numbers behind it are a table in the same
 * figure, read by screen readers, and shown to everyone when the page's "Show the numbers" is on.
 */

/** One bar: its length (`value`), what it says (`text`), and an optional second bar (`value2`, e.g. p90 beside p50). */
export interface Bar {
  key: string;
  label: string;
  value: number;
  text: string;
  value2?: number;
}

export interface Table {
  head: string[];
  rows: (string | number)[][];
}

/** A figure: title, a line saying what it shows, the drawing (or why there is none), and its table. */
export function Chart(props: { id: string; title: string; summary: string; empty?: string | null; table: Table; showTable: boolean; legend?: ComponentChildren; children: ComponentChildren }) {
  return (
    <figure class="card chart" aria-labelledby={`${props.id}-title`} data-chart={props.id}>
      <figcaption>
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        <p class="muted small">{props.summary}</p>
      </figcaption>
      {props.empty ? (
        <p class="muted chart-empty">{props.empty}</p>
      ) : (
        <div class="chart-drawing" aria-hidden="true">
          {props.legend}
          {props.children}
        </div>
      )}
      {!props.empty && (
        <div class={props.showTable ? 'chart-table-wrap' : 'sr-only'}>
          <table class="chart-table">
            <caption class="sr-only">{props.title}: the numbers</caption>
            <thead>
              <tr>
                {props.table.head.map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.table.rows.map((row, i) => (
                <tr key={i}>
                  {row.map((cell, j) => (j === 0 ? <th key={j} scope="row">{cell}</th> : <td key={j}>{cell}</td>))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </figure>
  );
}

const pct = (value: number, max: number) => (max <= 0 ? 0 : Math.max(0, Math.min(100, (value / max) * 100)));

/** Vertical columns, one per item in order (days), scaled to the largest; the first and last labels and the top value under and beside it. */
export function Columns({ bars, unit }: { bars: Bar[]; unit: string }) {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const width = bars.length * 10;
  return (
    <div class="columns-chart">
      <p class="chart-scale small muted">
        {max > 0 ? `top ${bars.find((b) => b.value === max)?.text ?? max}` : `no ${unit}`}
      </p>
      <svg class="chart-svg" viewBox={`0 0 ${width} 100`} preserveAspectRatio="none" role="presentation">
        <line class="chart-axis" x1="0" y1="100" x2={width} y2="100" />
        {bars.map((b, i) => {
          const h = pct(b.value, max);
          return (
            <rect key={b.key} class="chart-bar" x={i * 10 + 1} y={100 - h} width="8" height={h}>
              <title>
                {b.label}: {b.text}
              </title>
            </rect>
          );
        })}
      </svg>
      <p class="chart-ends small muted">
        <span>{bars[0]?.label}</span>
        <span>{bars.at(-1)?.label}</span>
      </p>
    </div>
  );
}

/** Horizontal bars, one row each (label, bar, value), scaled to the largest; with `value2`, a second, lighter bar under the first. */
export function Bars({ bars }: { bars: Bar[] }) {
  const max = Math.max(0, ...bars.map((b) => Math.max(b.value, b.value2 ?? 0)));
  const pair = bars.some((b) => b.value2 !== undefined);
  return (
    <ul class="bars-chart">
      {bars.map((b) => (
        <li key={b.key} class="bars-row">
          <span class="bars-label" title={b.label}>
            {b.label}
          </span>
          <svg class={pair ? 'bars-svg bars-svg-pair' : 'bars-svg'} viewBox="0 0 100 10" preserveAspectRatio="none" role="presentation">
            <rect class="chart-bar" x="0" y={pair ? 0 : 1} width={pct(b.value, max)} height={pair ? 4.5 : 8} />
            {pair && <rect class="chart-bar chart-bar-2" x="0" y="5.5" width={pct(b.value2 ?? 0, max)} height="4.5" />}
          </svg>
          <span class="bars-value">{b.text}</span>
        </li>
      ))}
    </ul>
  );
}

/** The key of a two-bar chart. */
export function Legend({ first, second }: { first: string; second: string }) {
  return (
    <p class="chart-legend small">
      <span class="swatch swatch-1" /> {first} <span class="swatch swatch-2" /> {second}
    </p>
  );
}
