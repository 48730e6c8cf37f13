import { call, getAll, type ItemOf, pages } from '../api.ts';
import type { Agent, Approval, Ask, BatonEvent, InsightFigures, Token } from '../types.ts';
import { DAY_MS, OUTCOME_TYPES } from './fleet-state.ts';

/** A lease as GET /leases serves it. */
type LeaseRow = ItemOf<'leases_list'>;

/** A task in progress or in review (title, status, handoff and lease: the fields the fleet asks for). */
type HeldTask = ItemOf<'tasks_list'>;

/**
 * Tokens change rarely and `last_used_at` is kept to the minute: an agent's are read again on its
 * token and agent events, and everyone's after this long. Reading them is a request per agent on
 * the viewer's rate budget (600 a minute by default): once a minute, a fleet of 500 spent most of it.
 */
const TOKENS_MS = 5 * 60_000;
/** The day's outcomes are read once, newest first, up to this many pages of 100; afterwards only what is new. */
const OUTCOME_PAGES = 10;

/** Today's figures per agent (insight_get by agent), read again on outcome events or after this. */
const USAGE_MS = 60_000;

/** Each agent's figures for the current UTC day: runs ended and how long they took, what they cost. */
export interface Usage {
  /** Principal id → its figures; empty when the viewer may not read insight (agents are refused it). */
  byAgent: Map<string, InsightFigures>;
  readAt: number;
}

export interface Tokens {
  /** Agent id → its tokens, for the agents read: those without a lease when read (see loadFleet). */
  byAgent: Map<string, Token[]>;
  readAt: number;
}

/** The last day's outcome events, newest first, kept between reloads and extended with what is new. */
export interface OutcomeLog {
  events: BatonEvent[];
  /** False when the first read stopped at its page limit before reaching a day back: the day's figures are lower bounds. */
  complete: boolean;
}

export interface FleetData {
  agents: Agent[];
  /** Active leases. */
  leases: LeaseRow[];
  /** Tasks in progress and in review, by id. */
  tasks: Map<string, HeldTask>;
  tokens: Tokens;
  /** lease id → its latest heartbeat event. */
  beats: Map<string, BatonEvent>;
  /** Pending approvals (none when the viewer may not list them). */
  approvals: Approval[];
  outcomes: OutcomeLog;
  /** Open asks, the newest 100: an agent with one of its own open waits on a human (spec/web.md). */
  asks: Ask[];
  usage: Usage;
  /**
   * What a bounded read left out, for the page to say so: the newest 500 agents were read of more
   * (`agents`), 300 active leases of more (`leases`: an agent whose lease was not read shows no
   * lease), 500 tasks in progress or in review of more (`tasks`).
   */
  partial: { agents: boolean; leases: boolean; tasks: boolean };
}

/** Pages of 100 each read lists (agents, active leases, tasks held or in review) at most. */
export const FLEET_PAGES = { agents: 5, leases: 3, tasks: 5 } as const;

const OUTCOMES = { types: [...OUTCOME_TYPES] };

/** The day's outcomes: the first time read back a day (bounded); then only the events after the newest one kept. */
async function readOutcomes(last: OutcomeLog | null): Promise<OutcomeLog> {
  const dayAgo = Date.now() - DAY_MS;
  if (last) {
    const newest = last.events[0]?.id;
    const fresh = (newest ? (await getAll('events_list', { ...OUTCOMES, since: newest }, 5)).data.reverse() : (await call('events_list', { ...OUTCOMES, order: 'desc', limit: 100 })).data) as BatonEvent[];
    return { events: [...fresh, ...last.events].filter((e) => Date.parse(e.created_at) >= dayAgo), complete: last.complete };
  }
  const events: BatonEvent[] = [];
  let complete = false;
  for await (const page of pages('events_list', { ...OUTCOMES, order: 'desc' }, OUTCOME_PAGES)) {
    events.push(...(page.data as BatonEvent[]));
    const oldest = page.data.at(-1);
    if (!page.has_more || (oldest && Date.parse(oldest.created_at) < dayAgo)) {
      complete = true;
      break;
    }
  }
  return { events: events.filter((e) => Date.parse(e.created_at) >= dayAgo), complete };
}

/**
 * One reload: seven requests (eight on the first, which reads the day's outcomes back), each
 * agent's tokens only when `tokens` is missing, stale or lacks an agent, and today's figures per
 * agent only when `usage` is missing or stale.
 */
export async function loadFleet(last: { tokens: Tokens; outcomes: OutcomeLog; usage: Usage | null } | null): Promise<FleetData> {
  // What agents hold now, however old: on a busy queue the newest leases of any state were seconds old and left long-held ones out.
  const [agents, active, beats, outcomes, tasks, approvals, asks, usage] = await Promise.all([
    getAll('agents_list', { kind: 'agent' }, FLEET_PAGES.agents),
    getAll('leases_list', { state: 'active' }, FLEET_PAGES.leases),
    call('events_list', { order: 'desc', types: ['lease.renewed'], limit: 100 }),
    readOutcomes(last?.outcomes ?? null),
    // A leased task is in progress, handed-in work waits in review: one list of both rather than a GET per task.
    getAll('tasks_list', { status: ['in_progress', 'in_review'], fields: ['title', 'status', 'handoff', 'lease'] }, FLEET_PAGES.tasks),
    call('approvals_list', { status: 'pending', limit: 100 }).then(
      (page) => page.data,
      (): Approval[] => [],
    ),
    call('asks_list', { status: ['open'], limit: 100 }).then((page) => page.data),
    readUsage(last?.usage ?? null),
  ]);
  const fleet = agents.data;
  const leases = active.data.filter((l) => l.state === 'active');
  // Only an agent without a lease needs its tokens for its state (idle or offline by when one was
  // last used); a working agent's lease names its machine. One request per agent otherwise: a
  // busy fleet of 500 spent most of the viewer's rate budget on its first read.
  const holders = new Set(leases.map((l) => l.holder.id));
  const latest = new Map<string, BatonEvent>();
  for (const event of beats.data as BatonEvent[]) {
    const lease = String(event.data.lease_id);
    if (!latest.has(lease)) latest.set(lease, event);
  }
  return {
    agents: fleet,
    leases,
    tasks: new Map(tasks.data.map((t) => [t.id, t])),
    tokens: await readTokens(
      fleet.filter((a) => !holders.has(a.id)),
      last?.tokens ?? null,
    ),
    beats: latest,
    approvals,
    outcomes,
    asks,
    usage,
    partial: { agents: !agents.complete, leases: !active.complete, tasks: !tasks.complete },
  };
}

/** Today's figures by agent: the last read while under a minute old, else a new one (none when refused). */
async function readUsage(last: Usage | null): Promise<Usage> {
  if (last && Date.now() - last.readAt < USAGE_MS) return last;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const groups = await call('insight_get', { from: day(Date.now()), to: day(Date.now() + DAY_MS), by: 'agent' }).then(
    (insight) => insight.groups,
    () => [],
  );
  return { byAgent: new Map(groups.map((g) => [g.key, g.figures])), readAt: Date.now() };
}

/** The tokens of `agents`: while the last read is under TOKENS_MS old, only those it lacks are read (it keeps the others it has); else all of them again. */
async function readTokens(agents: Agent[], last: Tokens | null): Promise<Tokens> {
  const fresh = last && Date.now() - last.readAt < TOKENS_MS ? last : null;
  const unread = agents.filter((a) => !fresh?.byAgent.has(a.id));
  if (fresh && unread.length === 0) return fresh;
  const read = await Promise.all(unread.map((a) => getAll('tokens_list', { id: a.id }, 1).then((r): [string, Token[]] => [a.id, r.data], (): [string, Token[]] => [a.id, []])));
  return { byAgent: new Map([...(fresh?.byAgent ?? []), ...read]), readAt: fresh?.readAt ?? Date.now() };
}

/** The tokens read so far without one agent's, so the next reload reads that agent's again (a token or agent event about it). */
export function forgetTokens(tokens: Tokens | null, agentId: string): Tokens | null {
  if (!tokens) return null;
  const byAgent = new Map(tokens.byAgent);
  byAgent.delete(agentId);
  return { ...tokens, byAgent };
}

/** The fleet with one heartbeat applied: its lease's new expiry and renewal, and its note. No request. */
export function withHeartbeat(data: FleetData, event: BatonEvent): FleetData {
  const leaseId = String(event.data.lease_id);
  if (!data.leases.some((l) => l.id === leaseId)) return data;
  const expiresAt = typeof event.data.expires_at === 'string' ? event.data.expires_at : null;
  const leases = data.leases.map((l) => (l.id === leaseId ? { ...l, renewed_at: event.created_at, ...(expiresAt ? { expires_at: expiresAt } : {}) } : l));
  return { ...data, leases, beats: new Map(data.beats).set(leaseId, event) };
}
