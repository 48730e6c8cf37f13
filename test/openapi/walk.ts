import type { RequestOptions, Response, TestServer } from '../harness.ts';
import { walkAgents } from './walk-agents.ts';
import { walkArtifacts } from './walk-artifacts.ts';
import { walkCollaboration } from './walk-collaboration.ts';
import { walkAsks } from './walk-asks.ts';
import { walkApprovals } from './walk-approvals.ts';
import { walkLeases } from './walk-leases.ts';
import { walkLists } from './walk-lists.ts';
import { walkTasks } from './walk-tasks.ts';
import { walkWebhooks } from './walk-webhooks.ts';
import { walkReservations } from './walk-reservations.ts';
import { walkRuns } from './walk-runs.ts';
import { walkBudgets } from './walk-budgets.ts';
import { walkSchedules } from './walk-schedules.ts';
import { walkTemplates } from './walk-templates.ts';

/** One request and the response it got, as a client saw it. */
export interface Exchange {
  readonly method: string;
  /** The path, without the query. */
  readonly url: string;
  readonly status: number;
  readonly contentType: string | undefined;
  readonly headers: Response['headers'];
  readonly body: string;
}

export interface Walk {
  readonly exchanges: Exchange[];
  /** Steps that answered another status than the script expects, or lacked a header it relies on. */
  readonly surprises: string[];
}

/** The walk's callers besides the bootstrap human admin (every scope), who is the default when no token is given. */
export interface Principals {
  readonly agent: { id: string; token: string };
  readonly reviewer: { id: string; token: string };
  readonly reader: { id: string; token: string };
  readonly eventsOnly: { id: string; token: string };
  readonly allowlisted: { id: string; token: string };
  readonly agentAdmin: { id: string; token: string };
}

/** What the walk's sections share: the recorder, the principals, and tasks made along the way. */
export interface Walker {
  readonly t: TestServer;
  readonly who: Principals;
  /** Sends a request, records the exchange, and notes a surprise when the status is not `expected`. */
  readonly call: (method: string, url: string, options: RequestOptions, expected: number) => Promise<Response>;
  readonly expectHeader: (res: Response, name: string, value: string) => void;
  /** The value, or a surprise (and a throw: the walk cannot go on without it). */
  readonly present: <T>(value: T | null | undefined, what: string) => T;
}

export interface TaskRef {
  id: string;
  version: number;
  status: string;
}

export const UNKNOWN = {
  task: 'tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  lease: 'lea_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  event: 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  agent: 'agt_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  token: 'tok_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  approval: 'apr_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  artifact: 'art_01ARZ3NDEKTSV4RRFFQ69G5FAV',
} as const;

/**
 * Drives every operation of the registry through successes, refusals, validation failures,
 * conflicts and replays, and returns every exchange. A step that answers an unexpected status is
 * recorded as a surprise; the walk goes on, so one server bug does not hide the others.
 */
export async function walkEveryOperation(t: TestServer): Promise<Walk> {
  const exchanges: Exchange[] = [];
  const surprises: string[] = [];
  const who: Principals = {
    agent: await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] }),
    reviewer: await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'tasks:review', 'events:read'] }),
    reader: await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] }),
    eventsOnly: await t.addPrincipal({ kind: 'agent', scopes: ['events:read'] }),
    allowlisted: await t.addPrincipal({ kind: 'agent', allowlist: ['whoami', 'tasks_get'] }),
    agentAdmin: await t.addPrincipal({ kind: 'agent', scopes: ['agents:admin', 'tasks:read', 'approvals:decide'] }),
  };
  const w: Walker = {
    t,
    who,
    call: async (method, url, options, expected) => {
      const res = await t.request(method, url, options);
      const type = res.headers['content-type'];
      exchanges.push({ method, url: url.split('?')[0] ?? url, status: res.status, contentType: type === undefined ? undefined : String(type), headers: res.headers, body: res.body });
      if (res.status !== expected) surprises.push(`${method} ${url} answered ${res.status}, expected ${expected}: ${res.body.slice(0, 300)}`);
      return res;
    },
    expectHeader: (res, name, value) => {
      if (res.headers[name] !== value) surprises.push(`expected ${name}: ${value}, got ${String(res.headers[name])}`);
    },
    present: (value, what) => {
      if (value === null || value === undefined) {
        surprises.push(`the walk needs ${what}, but the response had none`);
        throw new Error(`the walk needs ${what}; surprises so far:\n${surprises.join('\n')}`);
      }
      return value;
    },
  };
  const tasks = await walkTasks(w);
  await walkLeases(w, tasks.byAgent);
  await walkAgents(w);
  await walkApprovals(w);
  await walkLists(w, tasks);
  await walkArtifacts(w);
  await walkWebhooks(w);
  await walkSchedules(w);
  await walkTemplates(w);
  await walkReservations(w);
  await walkRuns(w);
  await walkBudgets(w);
  await walkCollaboration(w);
  await walkAsks(w);
  return { exchanges, surprises };
}
