import { useEffect, useState } from 'preact/hooks';
import { call, type Problem, problemOf } from '../api.ts';
import { Loading, PageProblem } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import { type Insight, type InsightDuration, type InsightFigures, type Money, STATUSES } from '../types.ts';
import { type Bar, Bars, Chart, Columns, Legend, type Table } from './charts.tsx';
import '../insight.css';

/** The windows offered, in days ending today (UTC); `insight_get` sums at most 92. */
const WINDOWS = [7, 30, 90] as const;
const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The window's days from the address (`/insight?days=7`); 30 unless one of the offered ones. */
export function windowDays(search: string): number {
  const days = Number(new URLSearchParams(search).get('days'));
  return (WINDOWS as readonly number[]).includes(days) ? days : 30;
}

/** Seconds as "45s", "4m 05s", "3h 20m", "2d 4h"; "–" when nothing was counted. */
export function span(s: number | null): string {
  if (s === null) return '–';
  if (s >= 86_400) return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

const count = (n: number) => n.toLocaleString();
const rate = (r: number | null) => (r === null ? '–' : `${Math.round(r * 1000) / 10}%`);
const money = (m: Money) => new Intl.NumberFormat(undefined, { style: 'currency', currency: m.currency, maximumFractionDigits: 4 }).format(m.amount);
const costs = (list: Money[]) => (list.length === 0 ? '–' : list.map(money).join(' + '));
const tokens = (f: InsightFigures) => f.usage.input_tokens + f.usage.output_tokens;
const amountIn = (f: InsightFigures, currency: string | null) => f.usage.cost.find((c) => c.currency === currency)?.amount ?? 0;

/** The currency most was spent in over the window: the one the cost bars are drawn in (others are in the tables). */
function mainCurrency(totals: InsightFigures): string | null {
  return [...totals.usage.cost].sort((a, b) => b.amount - a.amount)[0]?.currency ?? null;
}

/** One bar per group, drawn by cost in the main currency, or by tokens when nothing cost money. */
function spendBars(groups: Insight['groups'], currency: string | null, name: (key: string) => string): Bar[] {
  return groups.map((g) => ({
    key: g.key,
    label: name(g.key),
    value: currency ? amountIn(g.figures, currency) : tokens(g.figures),
    text: currency ? `${costs(g.figures.usage.cost)} · ${count(tokens(g.figures))} tokens` : `${count(tokens(g.figures))} tokens`,
  }));
}

function spendTable(first: string, groups: Insight['groups'], name: (key: string) => string): Table {
  return {
    head: [first, 'Tasks done', 'Runs ended', 'Failure rate', 'Input tokens', 'Output tokens', 'Tool calls', 'Cost'],
    rows: groups.map(({ key, figures: f }) => [name(key), f.tasks_done, f.runs.ended, rate(f.runs.failure_rate), count(f.usage.input_tokens), count(f.usage.output_tokens), count(f.usage.tool_calls), costs(f.usage.cost)]),
  };
}

const durationRow = (label: string, d: InsightDuration) => [label, d.count, span(d.p50), span(d.p90), span(d.mean)];
const durationBar = (key: string, label: string, d: InsightDuration): Bar => ({ key, label, value: d.p50 ?? 0, value2: d.p90 ?? 0, text: `${span(d.p50)} / ${span(d.p90)}` });

interface Loaded {
  day: Insight;
  agent: Insight;
  label: Insight;
}

/** The insight page (issue 43 item 9): the charts of `insight_get` over a chosen window, each with its numbers as a table. */
export function InsightPage({ search }: { search: string }) {
  const { names } = useSession();
  const days = windowDays(search);
  const [data, setData] = useState<Loaded | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [showTables, setShowTables] = useState(false);
  const load = async () => {
    setProblem(null);
    const to = utcDay(Date.now() + DAY_MS);
    const from = utcDay(Date.parse(to) - days * DAY_MS);
    try {
      // Three reads: by day (its totals are the window's), by agent and by label.
      const [day, agent, label] = await Promise.all((['day', 'agent', 'label'] as const).map((by) => call('insight_get', { from, to, by })));
      if (day && agent && label) setData({ day, agent, label });
    } catch (error) {
      setProblem(problemOf(error));
    }
  };
  useEffect(() => {
    setData(null);
    void load();
  }, [days]);

  if (problem) return <PageProblem problem={problem} onRetry={() => void load()} />;
  const head = (
    <div class="page-head">
      <h1 id="insight-title">Insight</h1>
      <div class="insight-controls">
        <label>
          Window{' '}
          <select value={String(days)} onChange={(e) => navigate(`/insight?days=${(e.target as HTMLSelectElement).value}`)}>
            {WINDOWS.map((d) => (
              <option key={d} value={String(d)}>
                Last {d} days
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={showTables} onChange={(e) => setShowTables((e.target as HTMLInputElement).checked)} /> Show the numbers
        </label>
        <button type="button" class="button-quiet" onClick={() => void load()}>
          Refresh
        </button>
      </div>
    </div>
  );
  if (!data) {
    return (
      <section class="page" aria-labelledby="insight-title">
        {head}
        <Loading what="the figures" />
      </section>
    );
  }
  const t = data.day.totals;
  const currency = mainCurrency(t);
  const agentName = (id: string) => names.get(id) ?? id;
  const same = (key: string) => key;
  // Every day of the window, those with nothing included, so the columns keep time's scale.
  const byDay = new Map(data.day.groups.map((g) => [g.key, g.figures]));
  const dayKeys = Array.from({ length: data.day.days }, (_, i) => utcDay(Date.parse(data.day.from) + i * DAY_MS));
  const dayBar = (value: (f: InsightFigures | undefined) => number, text: (f: InsightFigures | undefined) => string) => (key: string) => ({ key, label: key.slice(5), value: value(byDay.get(key)), text: text(byDay.get(key)) });
  const durations: [string, string, InsightDuration][] = [
    ['cycle', 'Cycle time', t.cycle_time_s],
    ['lead', 'Lead time', t.lead_time_s],
    ['review', 'Review wait', t.review_wait_s],
    ['run', 'Run duration', t.runs.duration_s],
  ];
  const statuses = STATUSES.filter((s) => t.time_in_status_s[s].count > 0);
  const window = `${data.day.from} to ${utcDay(Date.parse(data.day.to) - DAY_MS)} (UTC)`;
  return (
    <section class="page insight-page" aria-labelledby="insight-title">
      {head}
      <p class="muted">
        {window}. Figures are counted on the day they happened; percentiles are read from buckets (within a minute below 2 minutes, within half the value above). See{' '}
        <a href="/spec/analytics.md">how each is counted</a>.
      </p>
      <dl class="insight-tiles" data-testid="insight-tiles">
        <div>
          <dt>Tasks done</dt>
          <dd>
            {count(t.tasks_done)} <span class="muted small">({t.done_per_day} a day)</span>
          </dd>
        </div>
        <div>
          <dt>Cycle time p50 / p90</dt>
          <dd>
            {span(t.cycle_time_s.p50)} / {span(t.cycle_time_s.p90)}
          </dd>
        </div>
        <div>
          <dt>Review wait p50 / p90</dt>
          <dd>
            {span(t.review_wait_s.p50)} / {span(t.review_wait_s.p90)}
          </dd>
        </div>
        <div>
          <dt>First-pass approval</dt>
          <dd>
            {rate(t.first_review.rate)} <span class="muted small">({t.first_review.approved} of {t.first_review.decided})</span>
          </dd>
        </div>
        <div>
          <dt>Failure rate</dt>
          <dd>
            {rate(t.runs.failure_rate)} <span class="muted small">({t.runs.failed} of {t.runs.ended} runs)</span>
          </dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>
            {costs(t.usage.cost)} <span class="muted small">({count(tokens(t))} tokens)</span>
          </dd>
        </div>
      </dl>
      <div class="insight-grid">
        <Chart
          id="throughput"
          title="Throughput"
          summary="Tasks moved to Done, per day."
          empty={t.tasks_done === 0 ? 'No task was done in this window.' : null}
          showTable={showTables}
          table={{ head: ['Day', 'Tasks done'], rows: dayKeys.map((k) => [k, byDay.get(k)?.tasks_done ?? 0]) }}
        >
          <Columns unit="tasks done" bars={dayKeys.map(dayBar((f) => f?.tasks_done ?? 0, (f) => `${f?.tasks_done ?? 0} done`))} />
        </Chart>
        <Chart
          id="times"
          title="Cycle time and waits"
          summary="Median (p50) and p90 of each: first claim to Done, creation to Done, in review until decided, each run."
          empty={durations.every(([, , d]) => d.count === 0) ? 'Nothing was finished or reviewed in this window.' : null}
          showTable={showTables}
          table={{ head: ['Measure', 'Count', 'p50', 'p90', 'Mean'], rows: durations.map(([, label, d]) => durationRow(label, d)) }}
          legend={<Legend first="p50" second="p90" />}
        >
          <Bars bars={durations.map(([key, label, d]) => durationBar(key, label, d))} />
        </Chart>
        <Chart
          id="statuses"
          title="Time in each status"
          summary="p50 and p90 of each stay, counted when the task left the status."
          empty={statuses.length === 0 ? 'No task left a status in this window.' : null}
          showTable={showTables}
          table={{ head: ['Status', 'Stays', 'p50', 'p90', 'Mean'], rows: statuses.map((s) => durationRow(STATUS_LABEL[s], t.time_in_status_s[s])) }}
          legend={<Legend first="p50" second="p90" />}
        >
          <Bars bars={statuses.map((s) => durationBar(s, STATUS_LABEL[s], t.time_in_status_s[s]))} />
        </Chart>
        <Chart
          id="failures"
          title="Failures by code"
          summary={`${rate(t.runs.failure_rate)} of ${count(t.runs.ended)} runs ended in a failure; first-pass approval ${rate(t.first_review.rate)}.`}
          empty={t.runs.failures.length === 0 ? (t.runs.ended === 0 ? 'No run ended in this window.' : 'No run failed in this window.') : null}
          showTable={showTables}
          table={{ head: ['Code', 'Failed runs', 'Share of runs ended'], rows: t.runs.failures.map((f) => [f.code, f.count, rate(t.runs.ended === 0 ? null : f.count / t.runs.ended)]) }}
        >
          <Bars bars={t.runs.failures.map((f) => ({ key: f.code, label: f.code, value: f.count, text: String(f.count) }))} />
        </Chart>
        <Chart
          id="spend-day"
          title={currency ? `Cost per day (${currency})` : 'Tokens per day'}
          summary="What runs reported using, on the day reported."
          empty={tokens(t) === 0 && t.usage.cost.length === 0 ? 'No run reported usage in this window.' : null}
          showTable={showTables}
          table={{ head: ['Day', 'Cost', 'Input tokens', 'Output tokens', 'Tool calls'], rows: dayKeys.map((k) => { const f = byDay.get(k); return [k, costs(f?.usage.cost ?? []), count(f?.usage.input_tokens ?? 0), count(f?.usage.output_tokens ?? 0), count(f?.usage.tool_calls ?? 0)]; }) }}
        >
          <Columns unit="usage" bars={dayKeys.map(dayBar((f) => (f ? (currency ? amountIn(f, currency) : tokens(f)) : 0), (f) => (currency ? costs(f?.usage.cost ?? []) : `${count(f ? tokens(f) : 0)} tokens`)))} />
        </Chart>
        <Chart
          id="spend-agent"
          title="Cost and tokens by agent"
          summary={`Per principal holding the runs${data.agent.groups_truncated ? '; the busiest 200' : ''}.`}
          empty={data.agent.groups.length === 0 ? 'Nobody worked in this window.' : null}
          showTable={showTables}
          table={spendTable('Agent', data.agent.groups, agentName)}
        >
          <Bars bars={spendBars(data.agent.groups, currency, agentName)} />
        </Chart>
        <Chart
          id="spend-label"
          title="Cost and tokens by label"
          summary={`A task with several labels counts under each${data.label.groups_truncated ? '; the busiest 200' : ''}.`}
          empty={data.label.groups.length === 0 ? 'No labelled task moved in this window.' : null}
          showTable={showTables}
          table={spendTable('Label', data.label.groups, same)}
        >
          <Bars bars={spendBars(data.label.groups, currency, same)} />
        </Chart>
      </div>
    </section>
  );
}
