import { type Kysely, sql } from 'kysely';
import { expect } from 'vitest';
import type { PrincipalKind, Scope } from '../../src/domain/scopes.ts';
import type { DB } from '../../src/store/schema.ts';
import type { Response, TestServer } from '../harness.ts';

/** A problem document as the REST adapter serves it. */
export interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
  hint: string;
  retryable: boolean;
  [extra: string]: unknown;
}

/** Asserts a response is the given problem (status, media type, code, the members every problem has) and returns it. */
export function expectProblem(res: Response, status: number, code: string): Problem {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json<Problem>();
  expect(problem).toMatchObject({ status, code });
  for (const member of ['title', 'detail', 'hint'] as const) expect(typeof problem[member], member).toBe('string');
  expect(typeof problem.retryable).toBe('boolean');
  return problem;
}

/** What a request could have written: the event count and a checksum of every table a call may change. */
export type Snapshot = Record<string, string>;

/**
 * Reads the snapshot in one statement. Left out: `rate_counters` and `tokens.last_used_at`, which
 * every authenticated request may legitimately change, refused or not.
 *
 * The tables that grow with every request the suites make (tasks, leases, principals, approvals,
 * stored idempotent answers) are read as their row count and the sum of their rows' `xmin` (the id of the
 * transaction that wrote each row version): an insert or a delete changes the count, and an update
 * replaces a row version with one written by the updating transaction, whose id differs, so any
 * write changes one of the two. Hashing every row instead grew with the tables: the authorization
 * matrix takes about 2,250 snapshots, and on PostgreSQL under load they took 572 s of its 963 s
 * hashed, 136 s counted. Tokens, whose `last_used_at` a refused request may move, keep their
 * checksum without it.
 */
export async function snapshot(db: Kysely<DB>): Promise<Snapshot> {
  const { rows } = await sql<Snapshot>`
    SELECT
      (SELECT count(*) FROM events)::text AS events,
      (SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) FROM tasks) AS tasks,
      (SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) FROM leases) AS leases,
      (SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) FROM agents) AS agents,
      (SELECT md5(coalesce(string_agg((to_jsonb(x) - 'last_used_at')::text, '|' ORDER BY x.id), '')) FROM tokens x) AS tokens,
      (SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) FROM approvals) AS approvals,
      (SELECT count(*) || ' ' || coalesce(sum(xmin::text::bigint), 0) FROM idempotency_keys) AS idempotency_keys
  `.execute(db);
  const row = rows[0];
  if (!row) throw new Error('the snapshot query returned no row');
  return row;
}

export async function expectRefusedWithoutWrites(
  t: TestServer,
  send: () => Promise<Response>,
  status: number,
  code: string,
  options: { keyRemembered?: boolean } = {},
): Promise<Problem> {
  const without = (s: Snapshot): Snapshot => {
    if (!options.keyRemembered) return s;
    const { idempotency_keys: _keys, ...rest } = s;
    return rest;
  };
  const before = await snapshot(t.database.db);
  const res = await send();
  const problem = expectProblem(res, status, code);
  expect(without(await snapshot(t.database.db)), `${code} must write nothing`).toEqual(without(before));
  return problem;
}

export interface AgentBody {
  id: string;
  kind: PrincipalKind;
  scopes: Scope[];
  version: number;
  [field: string]: unknown;
}

export interface IssuedToken {
  id: string;
  token: string;
  prefix: string;
  scopes: Scope[];
  agent_id: string;
  machine: string;
}

/** Creates a principal over HTTP as the bootstrap admin. */
export async function createPrincipal(
  t: TestServer,
  body: { name?: string; kind?: PrincipalKind; scopes: readonly Scope[]; tool_allowlist?: string[] | null; rate_limit?: number | null },
): Promise<AgentBody> {
  const res = await t.request('POST', '/api/v1/agents', { body: { name: 'principal', ...body } });
  expect(res.status, res.body).toBe(201);
  return res.json<AgentBody>();
}

/** Issues a token over HTTP as the bootstrap admin; the plaintext is in this response only. */
export async function issueToken(t: TestServer, agentId: string, machine: string, scopes?: readonly Scope[]): Promise<IssuedToken> {
  const res = await t.request('POST', `/api/v1/agents/${agentId}/tokens`, { body: { machine, ...(scopes ? { scopes } : {}) } });
  expect(res.status, res.body).toBe(201);
  return res.json<IssuedToken>();
}

/** A principal with one token, both made over HTTP. */
export async function principalWithToken(
  t: TestServer,
  body: Parameters<typeof createPrincipal>[1],
  machine = 'laptop',
): Promise<{ id: string; token: string; tokenId: string }> {
  const agent = await createPrincipal(t, body);
  const issued = await issueToken(t, agent.id, machine);
  return { id: agent.id, token: issued.token, tokenId: issued.id };
}

export interface WhoAmI {
  principal: { id: string; kind: PrincipalKind };
  token: { id: string; machine: string };
  scopes: Scope[];
  can: string[];
}

export async function whoami(t: TestServer, token: string): Promise<WhoAmI> {
  const res = await t.request('GET', '/api/v1/whoami', { token });
  expect(res.status, res.body).toBe(200);
  return res.json<WhoAmI>();
}

/** Creates a task as the bootstrap admin and returns its id and version. */
export async function createTask(t: TestServer, title = 'a task'): Promise<{ id: string; version: number }> {
  const res = await t.request('POST', '/api/v1/tasks', { body: { title } });
  expect(res.status, res.body).toBe(201);
  return res.json<{ id: string; version: number }>();
}

export interface EventBody {
  id: string;
  type: string;
  subject: string;
  actor: { id: string; kind: string };
  token_id?: string | null;
  machine?: string | null;
}

/** Every event about a subject, oldest first, as the admin reads it over HTTP (full view). */
export async function eventsAbout(t: TestServer, subject: string): Promise<EventBody[]> {
  const res = await t.request('GET', `/api/v1/events?subject=${subject}&view=full&limit=100`);
  expect(res.status, res.body).toBe(200);
  return res.json<{ data: EventBody[] }>().data;
}
