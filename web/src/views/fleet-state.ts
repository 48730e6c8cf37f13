import type { Agent, BatonEvent } from '../types.ts';

/** An agent's state on the fleet page; the rules are spec/web.md's "Fleet states". */
export type FleetState = 'stuck' | 'waiting' | 'working' | 'idle' | 'offline';

/** Who needs a look first: stuck, waiting on a human, working, idle, offline. */
export const FLEET_ORDER: readonly FleetState[] = ['stuck', 'waiting', 'working', 'idle', 'offline'];

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** A token used within this window counts as a live agent even without a lease. */
const SEEN_MS = 15 * 60_000;
/** A lease is near lapse once two heartbeat intervals passed without one (it runs out after three). */
const LATE_INTERVALS = 2;
/** Failures in a row, in the last hour, that make an agent stuck. */
const REPEATED = 2;

/** The event types an attempt ends with: a hand-in (success), a failed release, a lapsed lease. */
export const OUTCOME_TYPES = ['task.handed_in', 'task.attempt_failed', 'lease.expired'] as const;

/** How one attempt ended, for the agent that held it. */
export interface Outcome {
  agentId: string;
  kind: 'handed_in' | 'failed' | 'expired';
  at: number;
}

/**
 * The attempt an outcome event ends and whose it was: a hand-in by its agent, a release with outcome
 * failed by its agent, a lapsed lease by its holder (`lease.expired`; the lapse's own
 * `task.attempt_failed` is by the system and not counted twice). Null for any other event.
 */
export function outcomeOf(event: BatonEvent): Outcome | null {
  const at = Date.parse(event.created_at);
  if (event.type === 'task.handed_in' && event.actor.kind === 'agent') return { agentId: event.actor.id, kind: 'handed_in', at };
  if (event.type === 'task.attempt_failed' && event.data.kind === 'failed' && event.actor.kind === 'agent') return { agentId: event.actor.id, kind: 'failed', at };
  if (event.type === 'lease.expired' && typeof event.data.holder_id === 'string') return { agentId: event.data.holder_id, kind: 'expired', at };
  return null;
}

/** Attempts an agent finished in a window: handed in, and failed (released as failed or lapsed). */
export interface Tally {
  handedIn: number;
  failed: number;
}

export function tally(outcomes: readonly Outcome[], since: number): Tally {
  const within = outcomes.filter((o) => o.at >= since);
  const handedIn = within.filter((o) => o.kind === 'handed_in').length;
  return { handedIn, failed: within.length - handedIn };
}

/** A held lease, as far as the rules need it. */
interface HeldLease {
  renewed_at: string;
  heartbeat_interval_s: number;
}

/** Whether the lease went two heartbeat intervals without a heartbeat: under a third of its TTL left. */
export const nearLapse = (lease: HeldLease, now: number): boolean => now - Date.parse(lease.renewed_at) > LATE_INTERVALS * lease.heartbeat_interval_s * 1000;

interface AgentFacts {
  agent: Agent;
  held: readonly HeldLease[];
  /** The agent's finished attempts, newest first. */
  outcomes: readonly Outcome[];
  /** Tasks it handed in that wait in review, and approvals it asked for that wait for a decision. */
  waitingOn: number;
  /** Open asks it put to a human (a person or a role), whatever task they are on. */
  asking: number;
  lastSeen: number | null;
}

/** Whether its latest attempts, in the last hour, all failed, at least twice in a row. */
function failingRepeatedly(outcomes: readonly Outcome[], now: number): boolean {
  const latest = outcomes.slice(0, REPEATED);
  return latest.length === REPEATED && latest.every((o) => o.kind !== 'handed_in' && now - o.at < HOUR_MS);
}

/**
 * The state by spec/web.md's rules, first match wins: offline when disabled; stuck when a held lease
 * is near lapse or its last two attempts failed within the hour; waiting on a human when it has an
 * open ask to a human (even while it holds a lease: it waits for the answer); working when it holds
 * a lease; waiting on a human when its work waits in review or on an approval; idle when seen in
 * the last 15 minutes; offline otherwise. One failure among successes is told, not a state.
 */
export function fleetState(facts: AgentFacts, now: number): FleetState {
  if (facts.agent.disabled) return 'offline';
  if (facts.held.some((l) => nearLapse(l, now)) || failingRepeatedly(facts.outcomes, now)) return 'stuck';
  if (facts.asking > 0) return 'waiting';
  if (facts.held.length > 0) return 'working';
  if (facts.waitingOn > 0) return 'waiting';
  return facts.lastSeen !== null && now - facts.lastSeen < SEEN_MS ? 'idle' : 'offline';
}
