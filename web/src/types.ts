/** The shapes the app reads, as served by /api/v1 (see /spec/domain-model.md). */
import type { OutputOf } from '../../src/client/index.ts';
import type { ItemOf } from './api.ts';
/** `T` with the members `K` present. */
type WithMembers<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> };

export type ActorKind = 'human' | 'agent' | 'system';
export interface Actor {
  id: string;
  kind: ActorKind;
}

export const STATUSES = ['todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled'] as const;
export type Status = (typeof STATUSES)[number];
export const PRIORITIES = ['urgent', 'high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

export type Lease = NonNullable<Task['lease']>;

/** An artifact reference, when the server attaches them to tasks. */
export type ArtifactRef = NonNullable<Task['artifacts']>[number];

/**
 * A task as the app reads it: the compact view (every list and read the app makes) always carries
 * these members, which `fields` may leave out of the type the server declares.
 */
export type Task = WithMembers<OutputOf<'tasks_get'>, 'priority' | 'labels' | 'lease' | 'waiting_on' | 'updated_at' | 'legal_transitions'>;

/** An event as the app reads it (the whole event: the app never asks for `fields`). */
export type BatonEvent = WithMembers<ItemOf<'events_list'>, 'actor' | 'data'>;

export type Approval = OutputOf<'approvals_get'>;

/** A question put to a person or role on a task (spec/asks.md). */
export type Ask = OutputOf<'asks_get'>;

/** Something outside Baton held for a while: a named resource, or paths in a repository (spec/collaboration.md). */
export type Reservation = OutputOf<'reservations_get'>;

export type Agent = OutputOf<'agents_get'>;

export type Token = ItemOf<'tokens_list'>;
/** A token as its creation answers it: with the secret, shown once. */
export type IssuedToken = OutputOf<'tokens_create'>;

export type Whoami = OutputOf<'whoami'>;

/** One of the caller's workspaces (GET /workspaces); `current` is the one this session acts in. */
export type Workspace = ItemOf<'workspaces_list'>;

/** The full capability manifest: scopes, operations, attempts (`GET /api/v1?view=full`). */
export type { Manifest } from '../../src/client/index.ts';

/** A run: one lease, with what it used (spec/runs.md). */
export type Run = OutputOf<'runs_get'>;

/** A duration's figures in seconds (spec/analytics.md): null when nothing was counted. */
export type InsightDuration = InsightFigures['cycle_time_s'];

export type Money = InsightFigures['usage']['cost'][number];

/** The figures of a window or of one group of it (`insight_get`). */
export type InsightFigures = Insight['totals'];

export type Insight = OutputOf<'insight_get'>;

/** A budget with what its current window spent (spec/runs.md#budgets). */
export type Budget = OutputOf<'budgets_get'>;
