import { useEffect, useRef, useState } from 'preact/hooks';
import { type Problem, problemOf } from '../api.ts';
import { Loading, PageProblem, ProblemNotice } from '../components.tsx';
import { ago, dueIn, duration, exact, timeLeft } from '../format.ts';
import { useNow } from '../hooks.ts';
import { navigate } from '../router.ts';
import { useEvents, useSession } from '../session.ts';
import type { InsightFigures } from '../types.ts';
import { FLEET_PAGES, type FleetData, forgetTokens, loadFleet, type OutcomeLog, type Tokens, type Usage, withHeartbeat } from './fleet-data.ts';
import { DAY_MS, FLEET_ORDER, type FleetState, fleetState, HOUR_MS, nearLapse, type Outcome, outcomeOf, type Tally, tally } from './fleet-state.ts';

const STATE_LABEL: Record<FleetState, string> = { stuck: 'Stuck', waiting: 'Waiting on a human', working: 'Working', idle: 'Idle', offline: 'Offline' };

/**
 * A burst of events reloads the page once, at most this often: each reload is eight requests on the
 * viewer's rate budget (600 a minute by default), so a busy fleet costs at most 96 a minute.
 * Heartbeats, the most frequent events by far, reload nothing: each is applied where it is shown.
 */
const RELOAD_MS = 5000;

const LIVE_TYPES = /^(lease\.|task\.claimed|task\.attempt_failed|task\.handed_in|task\.status_changed|approval\.|agent\.|token\.|ask\.)/;
/** Events that end a run, so today's figures per agent are read again. */
const RUN_ENDS = /^(lease\.(released|expired)|task\.(handed_in|attempt_failed))$/;

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** "3 handed in, 1 failed (75% succeeded)", or "none finished". */
function tallyText({ handedIn, failed }: Tally): string {
  const total = handedIn + failed;
  return total === 0 ? 'none finished' : `${handedIn} handed in, ${failed} failed (${Math.round((handedIn / total) * 100)}% succeeded)`;
}

/**
 * "Today (UTC): 2 runs ended, 14m 05s in all · reported: cost US$0.42, 12,000 tokens", from
 * insight_get by agent. What was reported today is the usage of every run, those still open
 * included, so it stands apart from the runs that ended.
 */
function usageText(figures: InsightFigures | undefined): string {
  if (!figures) return 'Today (UTC): no runs ended, nothing reported';
  const { runs, usage } = figures;
  const ended = runs.ended === 0 ? 'no runs ended' : `${runs.ended === 1 ? '1 run' : `${runs.ended} runs`} ended, ${duration((runs.duration_s.mean ?? 0) * runs.ended * 1000)} in all`;
  const reported = usage.cost.map((c) => `cost ${new Intl.NumberFormat(undefined, { style: 'currency', currency: c.currency, maximumFractionDigits: 4 }).format(c.amount)}`);
  const tokens = usage.input_tokens + usage.output_tokens;
  if (tokens > 0) reported.push(`${tokens.toLocaleString()} tokens`);
  return `Today (UTC): ${ended}${reported.length > 0 ? ` · reported: ${reported.join(', ')}` : ''}`;
}

/**
 * What the page says when a bounded read left part of a large fleet out, or null when it read it
 * all: which lists were cut, and what that does to the figures shown.
 */
function partialText(partial: FleetData['partial']): string | null {
  const cut = [
    partial.agents && `the newest ${FLEET_PAGES.agents * 100} agents`,
    partial.leases && `the newest ${FLEET_PAGES.leases * 100} active leases`,
    partial.tasks && `${FLEET_PAGES.tasks * 100} of the tasks in progress or in review`,
  ].filter((part): part is string => typeof part === 'string');
  if (cut.length === 0) return null;
  const list = cut.length === 1 ? cut[0] : `${cut.slice(0, -1).join(', ')} and ${cut.at(-1)}`;
  const leases = partial.leases ? ' An agent whose lease was not read shows as holding none.' : '';
  return `This page shows part of the fleet: it read ${list}, of more. The counts are of what it read.${leases} An agent’s own page shows all it holds.`;
}

/** The state `/fleet?state=…` shows alone (a count clicked), or null for every agent. */
function stateOf(search: string): FleetState | null {
  const wanted = new URLSearchParams(search).get('state');
  return FLEET_ORDER.find((s) => s === wanted) ?? null;
}

/**
 * Every agent, what it holds now, what waits on a human, and how it is doing, live. A count by
 * state shows those agents alone (in the address, to share: `/fleet?state=stuck`), and "Find" keeps
 * the agents whose name holds what is typed: a lead with hundreds of agents goes to the few that
 * need a look.
 */
export function Fleet({ search }: { search: string }) {
  const now = useNow(1000);
  const only = stateOf(search);
  const [find, setFind] = useState('');
  const [data, setData] = useState<FleetData | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const { names } = useSession();
  const kept = useRef<{ tokens: Tokens | null; outcomes: OutcomeLog | null; usage: Usage | null }>({ tokens: null, outcomes: null, usage: null });
  const load = () => {
    const { tokens, outcomes, usage } = kept.current;
    return loadFleet(tokens && outcomes ? { tokens, outcomes, usage } : null).then(
      (next) => {
        kept.current = { tokens: next.tokens, outcomes: next.outcomes, usage: next.usage };
        setData(next);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  };
  useEffect(() => {
    void load();
    return () => {
      if (pending.current) clearTimeout(pending.current);
    };
  }, []);
  useEvents((event) => {
    if (!LIVE_TYPES.test(event.type)) return;
    if (event.type === 'lease.renewed') {
      setData((shown) => shown && withHeartbeat(shown, event));
      return;
    }
    if (event.type.startsWith('token.')) kept.current = { ...kept.current, tokens: forgetTokens(kept.current.tokens, String(event.data.agent_id)) };
    if (event.type.startsWith('agent.')) kept.current = { ...kept.current, tokens: forgetTokens(kept.current.tokens, event.subject) };
    if (RUN_ENDS.test(event.type)) kept.current = { ...kept.current, usage: null };
    if (pending.current) return;
    // A burst of events (a claim writes three) reloads once.
    pending.current = setTimeout(() => {
      pending.current = null;
      void load();
    }, RELOAD_MS);
  });

  if (!data) return problem ? <PageProblem problem={problem} onRetry={() => void load()} /> : <Loading what="the fleet" />;
  const outcomes = data.outcomes.events.map(outcomeOf).filter((o): o is Outcome => o !== null);
  const tasks = [...data.tasks.values()];
  const agentIds = new Set(data.agents.map((a) => a.id));
  const rows = data.agents.map((agent) => {
    const held = data.leases.filter((l) => l.holder.id === agent.id);
    const mine = outcomes.filter((o) => o.agentId === agent.id);
    const inReview = tasks.filter((t) => t.status === 'in_review' && t.handoff?.by.id === agent.id);
    const asked = data.approvals.filter((a) => a.requested_by.id === agent.id);
    // Its own open asks to a human (a person or a role, not another agent): it waits on the answer.
    const asking = data.asks.filter((a) => a.asked_by.id === agent.id && !agentIds.has(a.to));
    // Undefined when not read: it held a lease at each read (its lease line names its machine).
    const tokens = data.tokens.byAgent.get(agent.id);
    const used = (tokens ?? []).map((t) => (t.last_used_at ? Date.parse(t.last_used_at) : 0)).concat(held.map((l) => Date.parse(l.renewed_at)));
    const lastSeen = used.length > 0 && Math.max(...used) > 0 ? Math.max(...used) : null;
    const state = fleetState({ agent, held, outcomes: mine, waitingOn: inReview.length + asked.length, asking: asking.length, lastSeen }, now);
    return { agent, held, mine, inReview, asked, asking, tokens, lastSeen, state };
  });
  rows.sort((a, b) => FLEET_ORDER.indexOf(a.state) - FLEET_ORDER.indexOf(b.state) || a.agent.name.localeCompare(b.agent.name));
  const counts = new Map(FLEET_ORDER.map((s) => [s, rows.filter((r) => r.state === s).length]));
  const needle = find.trim().toLowerCase();
  const partial = partialText(data.partial);
  const shown = rows.filter((r) => (only === null || r.state === only) && (needle === '' || r.agent.name.toLowerCase().includes(needle)));

  return (
    <section class="page" aria-labelledby="fleet-title">
      <div class="page-head">
        <h1 id="fleet-title">Fleet</h1>
        <p class="muted fleet-counts" aria-label="Agents by state">
          {FLEET_ORDER.map((s) => (
            <button
              key={s}
              type="button"
              class={`fleet-state fleet-${s} fleet-count`}
              aria-pressed={only === s}
              title={only === s ? 'Show every agent' : `Show only the agents ${STATE_LABEL[s].toLowerCase()}`}
              onClick={() => navigate(only === s ? '/fleet' : `/fleet?state=${s}`)}
            >
              {counts.get(s)} {STATE_LABEL[s].toLowerCase()}
            </button>
          ))}
        </p>
        <input type="search" class="fleet-find" aria-label="Find agents by name" placeholder="Find agents by name" value={find} onInput={(e) => setFind(e.currentTarget.value)} />
      </div>
      {problem && <ProblemNotice problem={problem} onRetry={() => void load()} onDismiss={() => setProblem(null)} />}
      {partial && (
        <p class="notice" role="status" data-testid="fleet-partial">
          {partial}
        </p>
      )}
      {rows.length === 0 && <p class="empty">No agents yet. Add one under Agents.</p>}
      {rows.length > 0 && shown.length === 0 && (
        <p class="empty">
          No agent {only ? `is ${STATE_LABEL[only].toLowerCase()}` : 'has that name'}
          {only && needle ? ' with that name' : ''}.{' '}
          <button type="button" class="button-link" onClick={() => {
              setFind('');
              navigate('/fleet');
            }}
          >
            Show every agent
          </button>
        </p>
      )}
      <ul class="fleet" aria-label="Agents">
        {shown.map(({ agent, held, mine, inReview, asked, asking, tokens, lastSeen, state }) => {
          const late = held.filter((l) => nearLapse(l, now)).length;
          const lastHour = mine.filter((o) => now - o.at < HOUR_MS);
          const failed = lastHour.filter((o) => o.kind === 'failed').length;
          const expired = lastHour.filter((o) => o.kind === 'expired').length;
          const inARow = mine.findIndex((o) => o.kind === 'handed_in' || now - o.at >= HOUR_MS);
          const streak = inARow === -1 ? mine.length : inARow;
          return (
            <li key={agent.id} class={`card fleet-agent fleet-agent-${state}`} data-agent={agent.name} data-state={state}>
              <div class="fleet-head">
                <h2>
                  <a href={`/agents/${agent.id}`}>{agent.name}</a>
                </h2>
                <span class={`fleet-state fleet-${state}`} data-testid="fleet-state">
                  {STATE_LABEL[state]}
                </span>
                <span class="muted small">{lastSeen !== null ? `last seen ${ago(new Date(lastSeen).toISOString(), now)}` : 'never seen'}</span>
                <a class="small fleet-events" href={`/activity?actor=${agent.id}`}>
                  Its events
                </a>
              </div>
              {(late > 0 || failed > 0 || expired > 0) && (
                <p class="fleet-health" data-testid="fleet-health">
                  {late > 0 && <span>{plural(late, 'lease')} near lapse without a heartbeat</span>}
                  {streak >= 2 && <span>its last {streak} attempts failed</span>}
                  {failed > 0 && <span>{plural(failed, 'failed attempt')} in the last hour</span>}
                  {expired > 0 && <span>{plural(expired, 'expired lease')} in the last hour</span>}
                </p>
              )}
              {held.length === 0 ? (
                <p class="muted small">Holds no lease.</p>
              ) : (
                <ul class="fleet-leases" aria-label={`Leases held by ${agent.name}`}>
                  {held.map((lease) => {
                    const beat = data.beats.get(lease.id);
                    const note = typeof beat?.data.note === 'string' ? beat.data.note : null;
                    const left = Date.parse(lease.expires_at) - now;
                    return (
                      <li key={lease.id} class="fleet-lease" data-lease={lease.id}>
                        <a href={`/tasks/${lease.task_id}`} class="task-title">
                          {data.tasks.get(lease.task_id)?.title ?? lease.task_id}
                        </a>
                        <span class={left < 0 ? 'lease-expired' : 'lease-time'} title={exact(lease.expires_at)}>
                          {timeLeft(lease.expires_at, now)}
                        </span>
                        <span class="muted small">
                          heartbeat {ago(lease.renewed_at, now)}
                          {lease.machine && ` · ${lease.machine}`}
                        </span>
                        {note && <p class="event-note">“{note}”</p>}
                      </li>
                    );
                  })}
                </ul>
              )}
              {(inReview.length > 0 || asked.length > 0 || asking.length > 0) && (
                <ul class="fleet-waits small" aria-label={`Waiting on a human for ${agent.name}`}>
                  {asking.map((a) => (
                    <li key={a.id} data-ask={a.id}>
                      Asked <a href={`/tasks/${a.task_id}`}>“{a.question}”</a> of {a.to.startsWith('role:') ? `the ${a.to.slice(5)} role` : (names.get(a.to) ?? a.to)},{' '}
                      <span title={exact(a.due_at)}>{dueIn(a.due_at, now)}</span>
                    </li>
                  ))}
                  {inReview.map((t) => (
                    <li key={t.id}>
                      In review: <a href={`/tasks/${t.id}`}>{t.title}</a>
                    </li>
                  ))}
                  {asked.map((a) => (
                    <li key={a.id}>
                      Approval for <a href="/approvals">{a.operation}</a>, asked {ago(a.created_at, now)}
                    </li>
                  ))}
                </ul>
              )}
              <p class="small fleet-stats" data-testid="fleet-stats">
                Last hour: {tallyText(tally(mine, now - HOUR_MS))} · last day: {tallyText(tally(mine, now - DAY_MS))}
                {!data.outcomes.complete && ' (at least: the day was read in part)'}
              </p>
              <p class="small fleet-usage" data-testid="fleet-usage">
                {usageText(data.usage.byAgent.get(agent.id))}
              </p>
              {tokens && (
                <p class="small fleet-tokens">
                  {tokens.filter((t) => !t.revoked_at).length === 0
                    ? 'No live token.'
                    : 'Machines: ' +
                      tokens
                        .filter((t) => !t.revoked_at)
                        .map((t) => `${t.machine} (${t.last_used_at ? `used ${ago(t.last_used_at, now)}` : 'never used'})`)
                        .join(' · ')}
                </p>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
