import { useEffect, useRef, useState } from 'preact/hooks';
import { get, getAll, type Page, type Problem, problemOf } from '../api.ts';
import { Loading, PageProblem, ProblemNotice } from '../components.tsx';
import { ago, exact, timeLeft } from '../format.ts';
import { useNow } from '../hooks.ts';
import { useEvents } from '../session.ts';
import type { Agent, BatonEvent, Token } from '../types.ts';

/** A lease as GET /leases serves it (the fields the fleet reads). */
interface LeaseRow {
  id: string;
  task_id: string;
  holder: { id: string; kind: string };
  machine: string | null;
  state: 'active' | 'released' | 'expired' | 'ended';
  heartbeat_interval_s: number;
  renewed_at: string;
  expires_at: string;
  ended_at: string | null;
}

export type FleetState = 'working' | 'idle' | 'struggling' | 'offline';

const HOUR_MS = 3_600_000;
/** A token used within this window counts as a live agent even without a lease. */
const SEEN_MS = 15 * 60_000;
/** A heartbeat is late once two intervals passed without one (the lease runs out after three). */
const LATE_INTERVALS = 2;

interface Health {
  late: number;
  expired: number;
  failed: number;
}

/**
 * The visual state of an agent: offline (disabled, or no lease and no token used lately),
 * struggling (a late heartbeat now, or an expired lease or failed attempt in the last hour),
 * working (holds a lease), idle (seen lately, holds nothing).
 */
export function fleetState(agent: Agent, active: number, health: Health, lastSeen: number | null, now: number): FleetState {
  if (agent.disabled) return 'offline';
  if (health.late > 0 || health.expired > 0 || health.failed > 0) return 'struggling';
  if (active > 0) return 'working';
  return lastSeen !== null && now - lastSeen < SEEN_MS ? 'idle' : 'offline';
}

const ORDER: readonly FleetState[] = ['struggling', 'working', 'idle', 'offline'];
const STATE_LABEL: Record<FleetState, string> = { working: 'Working', idle: 'Idle', struggling: 'Struggling', offline: 'Offline' };

/** A burst of events reloads the page once, at most this often: each reload is six requests on the viewer's rate budget. */
const RELOAD_MS = 1000;
/** Tokens change rarely and `last_used_at` is kept to the minute: read again on token and agent events, or after this. */
const TOKENS_MS = 60_000;

interface Tokens {
  byAgent: Map<string, Token[]>;
  readAt: number;
}

interface FleetData {
  agents: Agent[];
  leases: LeaseRow[];
  /** Titles of the tasks in progress, by id. */
  tasks: Map<string, string>;
  tokens: Tokens;
  /** lease id → its latest heartbeat event. */
  beats: Map<string, BatonEvent>;
  /** lease.expired and task.attempt_failed events of the last hour. */
  troubles: BatonEvent[];
}

/** One reload: six requests, and each agent's tokens only when `tokens` is missing, stale or lacks an agent. */
async function loadFleet(tokens: Tokens | null): Promise<FleetData> {
  // What agents hold now, however old, apart from the newest ended leases (which attribute failed attempts):
  // on a busy queue the newest 300 leases of any state were seconds old and left long-held ones out.
  const [agents, active, ended, beats, troubles] = await Promise.all([
    getAll<Agent>('/agents'),
    getAll<LeaseRow>('/leases?state=active', 3),
    get<Page<LeaseRow>>('/leases?state=ended&limit=100'),
    get<Page<BatonEvent>>('/events?order=desc&types=lease.renewed&limit=100'),
    get<Page<BatonEvent>>('/events?order=desc&types=lease.expired,task.attempt_failed&limit=100'),
  ]);
  const fleet = agents.data.filter((a) => a.kind === 'agent');
  const leases = [...active.data, ...ended.data];
  // A leased task is in progress: one list of their titles rather than a GET per lease.
  const [inProgress, fresh] = await Promise.all([getAll<{ id: string; title: string }>('/tasks?status=in_progress&fields=title', 3), readTokens(fleet, tokens)]);
  const latest = new Map<string, BatonEvent>();
  for (const event of beats.data) {
    const lease = String(event.data.lease_id);
    if (!latest.has(lease)) latest.set(lease, event);
  }
  return {
    agents: fleet,
    leases,
    tasks: new Map(inProgress.data.map((t) => [t.id, t.title])),
    tokens: fresh,
    beats: latest,
    troubles: troubles.data.filter((e) => Date.now() - Date.parse(e.created_at) < HOUR_MS),
  };
}

/** Each agent's tokens: the last read while it is under a minute old and covers every agent, else a new read. */
async function readTokens(fleet: Agent[], last: Tokens | null): Promise<Tokens> {
  if (last && Date.now() - last.readAt < TOKENS_MS && fleet.every((a) => last.byAgent.has(a.id))) return last;
  const read = await Promise.all(fleet.map((a) => getAll<Token>(`/agents/${a.id}/tokens`, 1).then((r): [string, Token[]] => [a.id, r.data], (): [string, Token[]] => [a.id, []])));
  return { byAgent: new Map(read), readAt: Date.now() };
}

/** Which agent a trouble event belongs to: the expired lease's holder, or the holder of the failed attempt's lease. */
function troubleHolder(event: BatonEvent, leases: Map<string, LeaseRow>): string | undefined {
  if (typeof event.data.holder_id === 'string') return event.data.holder_id;
  return leases.get(String(event.data.lease_id))?.holder.id ?? (event.actor.kind === 'agent' ? event.actor.id : undefined);
}

const LIVE_TYPES = /^(lease\.|task\.claimed|task\.attempt_failed|task\.status_changed|agent\.|token\.)/;

/** Every agent, what it holds now and how it is doing, live. */
export function Fleet() {
  const now = useNow(1000);
  const [data, setData] = useState<FleetData | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const tokensRead = useRef<Tokens | null>(null);
  const load = () =>
    loadFleet(tokensRead.current).then(
      (next) => {
        tokensRead.current = next.tokens;
        setData(next);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => {
    void load();
    return () => {
      if (pending.current) clearTimeout(pending.current);
    };
  }, []);
  useEvents((event) => {
    if (!LIVE_TYPES.test(event.type)) return;
    if (event.type.startsWith('token.') || event.type.startsWith('agent.')) tokensRead.current = null;
    if (pending.current) return;
    // A burst of events (a claim writes three) reloads once.
    pending.current = setTimeout(() => {
      pending.current = null;
      void load();
    }, RELOAD_MS);
  });

  if (!data) return problem ? <PageProblem problem={problem} onRetry={() => void load()} /> : <Loading what="the fleet" />;
  const byId = new Map(data.leases.map((l) => [l.id, l]));
  const rows = data.agents.map((agent) => {
    const held = data.leases.filter((l) => l.holder.id === agent.id && l.state === 'active');
    const troubles = data.troubles.filter((e) => troubleHolder(e, byId) === agent.id);
    const health: Health = {
      late: held.filter((l) => now - Date.parse(l.renewed_at) > LATE_INTERVALS * l.heartbeat_interval_s * 1000).length,
      expired: troubles.filter((e) => e.type === 'lease.expired').length,
      failed: troubles.filter((e) => e.type === 'task.attempt_failed').length,
    };
    const tokens = data.tokens.byAgent.get(agent.id) ?? [];
    const used = tokens.map((t) => (t.last_used_at ? Date.parse(t.last_used_at) : 0)).concat(held.map((l) => Date.parse(l.renewed_at)));
    const lastSeen = used.length > 0 && Math.max(...used) > 0 ? Math.max(...used) : null;
    return { agent, held, health, tokens, lastSeen, state: fleetState(agent, held.length, health, lastSeen, now) };
  });
  // Who needs a look first: struggling, then working, idle, offline; by name within each.
  rows.sort((a, b) => ORDER.indexOf(a.state) - ORDER.indexOf(b.state) || a.agent.name.localeCompare(b.agent.name));
  const counts = rows.reduce<Record<FleetState, number>>((acc, r) => ({ ...acc, [r.state]: acc[r.state] + 1 }), { working: 0, idle: 0, struggling: 0, offline: 0 });

  return (
    <section class="page" aria-labelledby="fleet-title">
      <div class="page-head">
        <h1 id="fleet-title">Fleet</h1>
        <p class="muted fleet-counts" aria-label="Agents by state">
          {ORDER.map((s) => (
            <span key={s} class={`fleet-state fleet-${s}`}>
              {counts[s]} {STATE_LABEL[s].toLowerCase()}
            </span>
          ))}
        </p>
      </div>
      {problem && <ProblemNotice problem={problem} onRetry={() => void load()} onDismiss={() => setProblem(null)} />}
      {rows.length === 0 && <p class="empty">No agents yet. Add one under Agents.</p>}
      <ul class="fleet" aria-label="Agents">
        {rows.map(({ agent, held, health, tokens, lastSeen, state }) => (
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
            {(health.late > 0 || health.expired > 0 || health.failed > 0) && (
              <p class="fleet-health" data-testid="fleet-health">
                {health.late > 0 && <span>{health.late} late heartbeat{health.late > 1 ? 's' : ''} now</span>}
                {health.expired > 0 && <span>{health.expired} expired lease{health.expired > 1 ? 's' : ''} in the last hour</span>}
                {health.failed > 0 && <span>{health.failed} failed attempt{health.failed > 1 ? 's' : ''} in the last hour</span>}
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
                        {data.tasks.get(lease.task_id) ?? lease.task_id}
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
            <p class="small fleet-tokens">
              {tokens.filter((t) => !t.revoked_at).length === 0
                ? 'No live token.'
                : 'Machines: ' +
                  tokens
                    .filter((t) => !t.revoked_at)
                    .map((t) => `${t.machine} (${t.last_used_at ? `used ${ago(t.last_used_at, now)}` : 'never used'})`)
                    .join(' · ')}
            </p>
          </li>
        ))}
      </ul>
    </section>
  );
}
