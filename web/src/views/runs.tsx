import { useEffect, useRef, useState } from 'preact/hooks';
import { call, type ItemOf, type Problem, problemOf } from '../api.ts';
import { ActorChip, Loading, ProblemNotice } from '../components.tsx';
import { duration, exact } from '../format.ts';
import { can, useEvents, useSession } from '../session.ts';
import type { Budget, Run } from '../types.ts';
import '../insight.css';

/** The runs shown: the newest 20 (a task with more has been retried a great deal; `baton runs list` pages on). */
const RUNS = 20;
/** Log lines read for the open run: its whole log (a run keeps at most 500). */
const LOG_LINES = 500;
/** Usage reports write no event, so a running run's figures are read again this often while it shows. */
const USAGE_MS = 10_000;

const OUTCOME: Record<Run['outcome'], string> = { running: 'Running', released: 'Released', lapsed: 'Lapsed', ended: 'Ended' };

function usageText(u: Run['usage']): string {
  if (u.reports === 0) return 'nothing reported';
  const parts = [`${u.input_tokens.toLocaleString()} in / ${u.output_tokens.toLocaleString()} out tokens`];
  if (u.currency) parts.push(new Intl.NumberFormat(undefined, { style: 'currency', currency: u.currency, maximumFractionDigits: 4 }).format(u.cost));
  if (u.tool_calls > 0) parts.push(`${u.tool_calls} tool calls`);
  if (u.model) parts.push(u.model);
  return parts.join(' · ');
}

const STATE: Record<Budget['state'], string> = { ok: 'within', warned: 'past 80 %', exhausted: 'exhausted: claims are refused' };

function amount(b: Budget, n: number): string {
  if (b.unit === 'cost') return new Intl.NumberFormat(undefined, { style: 'currency', currency: b.currency ?? 'USD', maximumFractionDigits: 4 }).format(n);
  return `${n.toLocaleString()} ${b.unit}`;
}

/** The budgets this task's runs spend from: its own, its labels', the workspace's and the newest run's agent's (the first 100 budgets, matched in the page). */
function BudgetsLine({ budgets, names }: { budgets: Budget[]; names: Map<string, string> }) {
  if (budgets.length === 0) return null;
  const what = (b: Budget) => (b.applies_to === 'task' ? 'this task' : b.applies_to === 'label' ? `label ${b.target}` : b.applies_to === 'workspace' ? 'the workspace' : (names.get(b.target) ?? b.target));
  return (
    <ul class="run-budgets small" aria-label="Budgets these runs spend from">
      {budgets.map((b) => (
        <li key={b.id} class={`budget-${b.state}`} data-budget={b.id}>
          <strong>{b.name}</strong> ({what(b)}, {b.period === 'lifetime' ? 'lifetime' : `per ${b.period}`}): {amount(b, b.spent)} of {amount(b, b.limit)}, {STATE[b.state]}
          {b.resets_at ? `; resets ${exact(b.resets_at)}` : ''}
        </li>
      ))}
    </ul>
  );
}

/**
 * The task's runs (spec/runs.md): each attempt with its outcome, holder, machine, times and usage,
 * and the open run's log (the newest run's at first), live: a `run.logged` event on the task reads
 * the log again, any other event on it the list.
 */
export function RunsPanel({ taskId, labels }: { taskId: string; labels: string[] }) {
  const session = useSession();
  const { names } = session;
  const [budgets, setBudgets] = useState<Budget[]>([]);
  const [runs, setRuns] = useState<ItemOf<'runs_list'>[] | null>(null);
  const [more, setMore] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [run, setRun] = useState<Run | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const openRef = useRef<string | null>(null);
  openRef.current = open;
  // The newest run's log is followed (a new claim opens the new run) until another run is chosen.
  const follow = useRef(true);
  const choose = (id: string) => {
    follow.current = id === runs?.[0]?.id;
    setOpen(id);
  };

  const loadRun = (id: string) =>
    call('runs_get', { id, log_lines: LOG_LINES }).then(
      (r) => openRef.current === id && setRun(r),
      (error: unknown) => setProblem(problemOf(error)),
    );
  const loadBudgets = (holder: string | undefined) => {
    if (!can(session, 'budgets_list')) return;
    void call('budgets_list', { limit: 100 }).then(
      (page) => setBudgets(page.data.filter((b) => (b.applies_to === 'task' && b.target === taskId) || (b.applies_to === 'label' && labels.includes(b.target)) || (b.applies_to === 'agent' && b.target === holder) || b.applies_to === 'workspace')),
      () => undefined,
    );
  };
  const loadRuns = () =>
    call('runs_list', { task_id: taskId, limit: RUNS }).then(
      (page) => {
        loadBudgets(page.data[0]?.holder.id);
        setRuns(page.data);
        setMore(page.has_more);
        setProblem(null);
        const first = page.data[0];
        if (first && (openRef.current === null || (follow.current && openRef.current !== first.id))) setOpen(first.id);
        else if (openRef.current) void loadRun(openRef.current);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => {
    setRuns(null);
    follow.current = true;
    setOpen(null);
    setRun(null);
    void loadRuns();
  }, [taskId]);
  useEffect(() => {
    setRun(null);
    if (open) void loadRun(open);
  }, [open]);
  useEffect(() => {
    if (run?.outcome !== 'running') return;
    const timer = setInterval(() => {
      void loadRun(run.id);
      loadBudgets(runs?.[0]?.holder.id);
    }, USAGE_MS);
    return () => clearInterval(timer);
  }, [run?.id, run?.outcome]);
  useEvents((event) => {
    if (event.subject !== taskId) return;
    const lease = event.data.lease_id;
    if (event.type === 'run.logged' && typeof lease === 'string' && lease === openRef.current) void loadRun(lease);
    else if (event.type !== 'run.logged') void loadRuns();
  });

  return (
    <section class="card" aria-labelledby="runs-title" data-testid="runs">
      <h2 id="runs-title">Runs</h2>
      {problem && <ProblemNotice problem={problem} onRetry={() => void loadRuns()} />}
      {!runs ? (
        !problem && <Loading what="the runs" />
      ) : runs.length === 0 ? (
        <p class="muted">No runs yet: nobody has claimed this task.</p>
      ) : (
        <ol class="runs-list">
          {runs.map((r) => (
            <li key={r.id} class="run" data-run={r.id} data-outcome={r.outcome} aria-current={r.id === open ? 'true' : undefined}>
              <div class="run-head">
                <span class={`run-outcome run-outcome-${r.outcome}`}>{OUTCOME[r.outcome]}</span>
                <ActorChip actor={r.holder} />
                <span class="muted small">{r.machine ? `on ${r.machine}` : 'no machine'}</span>
                {r.id !== open && (
                  <button type="button" class="button-link" onClick={() => choose(r.id)}>
                    Show log ({r.log_lines} lines)
                  </button>
                )}
              </div>
              <dl class="facts run-facts small">
                <dt>Started</dt>
                <dd>
                  {exact(r.started_at)}
                  {r.ended_at ? ` · ${OUTCOME[r.outcome].toLowerCase()} after ${duration(Date.parse(r.ended_at) - Date.parse(r.started_at))}` : ''}
                </dd>
                <dt>Usage</dt>
                <dd data-testid="run-usage">{usageText((r.id === run?.id ? run : r).usage)}</dd>
              </dl>
              {r.id === open && <RunLog run={run} />}
            </li>
          ))}
        </ol>
      )}
      <BudgetsLine budgets={budgets} names={names} />
      {more && (
        <p class="muted small">
          The newest {RUNS} runs; <code>baton runs list --task {taskId}</code> lists the rest.
        </p>
      )}
    </section>
  );
}

function RunLog({ run }: { run: Run | null }) {
  if (!run?.log) return <Loading what="the log" />;
  if (run.log.length === 0) return <p class="muted small">No log lines{run.outcome === 'running' ? ' yet: they show here as the agent appends them' : ''}.</p>;
  return (
    <ol class="run-log" aria-label={`Log of run ${run.id}${run.outcome === 'running' ? ', live' : ''}`} tabIndex={0} aria-live={run.outcome === 'running' ? 'polite' : undefined}>
      {run.log.map((l) => (
        <li key={l.seq} class={`level-${l.level}`} title={exact(l.at)}>
          <span class="seq">{l.seq}</span>
          {l.level !== 'info' && <strong>{l.level}: </strong>}
          {l.line}
        </li>
      ))}
    </ol>
  );
}
