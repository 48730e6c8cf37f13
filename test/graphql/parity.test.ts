import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.ts';
import { isCallable, type Operation } from '../../src/operations/define-operation.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { eventsSettled } from '../leases/instances.ts';
import { makeFixtures, type OperationRequest, operationRequests, sendOperation } from '../security/operation-requests.ts';
import { graphql } from './client.ts';
import { fieldOf, graphqlRequest } from './requests.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
});
afterAll(() => t.close());

/** Ids, times, keys and cursors differ between two separate creations; what they stand for must not. */
function normalize(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => normalize(v));
  // A problem's wording is its interface's own (its hint; the HTTP location of a field): spec/graphql.md.
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'location').map(([k, v]) => [k, normalize(v, k)]));
  if (key === 'hint') return 'HINT';
  if (key === 'next_cursor' && typeof value === 'string') return 'CURSOR';
  // wait's cursor is the settled horizon when it was read: on a shared PostgreSQL, another
  // database's transaction can move it between the two calls.
  if (key === 'cursor' && typeof value === 'string') return 'CURSOR';
  if (key === 'Idempotency-Key' && typeof value === 'string') return 'KEY';
  if (key === 'remaining' || key === 'reset_s') return 0;
  if (typeof value !== 'string') return value;
  return value
    .replace(/\b([a-z]{2,3})_[0-9A-HJKMNP-TV-Z]{26}\b/g, '$1_ID')
    .replace(/\bwhsec_[0-9A-Za-z+/=]+/g, 'SECRET')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID')
    .replace(/bat_[0-9A-Za-z]+/g, 'TOKEN')
    .replace(/\bm-[0-9a-f]{8}\b/g, 'm-X');
}

/** The GraphQL answer cut to the members REST sent (GraphQL selected every field; absent ones are null). */
function likeRest(graphqlValue: unknown, rest: unknown): unknown {
  if (Array.isArray(rest)) return Array.isArray(graphqlValue) ? graphqlValue.map((v, i) => likeRest(v, rest[i])) : graphqlValue;
  if (rest && typeof rest === 'object' && graphqlValue && typeof graphqlValue === 'object') {
    return Object.fromEntries(Object.keys(rest).map((k) => [k, likeRest((graphqlValue as Record<string, unknown>)[k], (rest as Record<string, unknown>)[k])]));
  }
  return graphqlValue;
}

/** REST's full view where the operation has one: GraphQL selected every field. */
function fullView(op: Operation, request: OperationRequest): OperationRequest {
  if (!('fields' in op.input.shape)) return request;
  return { ...request, query: [request.query, 'view=full'].filter(Boolean).join('&') };
}

// Streams (SSE on REST, subscriptions here) are compared in subscription.test.ts.
const callable = operations.filter(isCallable);
/** A read leaves its objects as they were: one set serves every read. */
let readFixtures: Awaited<ReturnType<typeof makeFixtures>> | undefined;

describe('REST and GraphQL agree on every operation in the registry', () => {
  for (const op of callable) {
    it(`${op.name}`, async () => {
      const requestFor = operationRequests[op.name];
      if (!requestFor) throw new Error(`no sample request for ${op.name}`);
      // A write consumes its objects: each interface gets its own, made the same way.
      const restFixtures = op.kind === 'write' ? await makeFixtures(t) : (readFixtures ??= await makeFixtures(t));
      const gqlFixtures = op.kind === 'write' ? await makeFixtures(t) : restFixtures;
      // Claiming the next task takes the oldest in the whole queue: give each side one of its own to find.
      const queued = op.name === 'tasks_claim_next';
      const claimable = async () => expect((await t.request('POST', '/api/v1/tasks', { body: { title: 'parity', labels: ['parity'] } })).status).toBe(201);
      const sample = (fx: typeof restFixtures) => (queued ? { body: { labels: ['parity'] } } : requestFor(fx));
      if (queued) await claimable();
      // A replay queues what came after `since`: each side replays from the newest event at its call.
      // The list shows settled events only; on a shared PostgreSQL another database's transaction can
      // hold them back, and the replay would then find the unlisted one after `since`.
      const latest = async (fx: typeof restFixtures) => {
        if (op.name !== 'webhooks_replay') return fx;
        await eventsSettled(t);
        return { ...fx, event: (await t.request('GET', '/api/v1/events?order=desc&limit=1')).json<{ data: { id: string }[] }>().data[0]?.id ?? '' };
      };
      const rest = await sendOperation(t, op, fullView(op, sample(await latest(restFixtures))), t.adminToken);
      if (queued) await claimable();
      const { query, variables } = graphqlRequest(op, sample(await latest(gqlFixtures)));
      const res = await graphql<Record<string, unknown>>(t, query, { variables });
      if (rest.status >= 400) {
        expect(res.errors?.[0]?.extensions.code, rest.body).toBe(rest.json<{ code: string }>().code);
        return;
      }
      expect(res.errors, `${query}\n${JSON.stringify(res.errors)}`).toBeUndefined();
      const answer = res.data?.[fieldOf(op).name];
      expect(normalize(likeRest(answer, rest.json()))).toEqual(normalize(rest.json()));
    });
  }
});

describe('refusals look the same over REST and GraphQL', () => {
  it('a missing scope and an allowlist refusal give the same problem on both, for every operation', async () => {
    const fixtures = await makeFixtures(t);
    const scopeless = await t.addPrincipal({ scopes: [] });
    const allowlisted = await t.addPrincipal({ allowlist: ['whoami'] });
    for (const op of callable.filter((o) => o.scope !== null)) {
      const request = operationRequests[op.name]?.(fixtures) ?? {};
      const { query, variables } = graphqlRequest(op, request);
      for (const [who, code] of [
        [scopeless.token, 'forbidden_scope'],
        [allowlisted.token, 'tool_not_allowed'],
      ] as const) {
        const rest = await sendOperation(t, op, request, who);
        const res = await graphql(t, query, { variables, token: who });
        const problem = rest.json<{ code: string; status: number; title: string; hint: string }>();
        expect(problem.code, op.name).toBe(code);
        expect(normalize(res.errors?.[0]?.extensions), op.name).toEqual(normalize(problem));
      }
    }
  });
});

