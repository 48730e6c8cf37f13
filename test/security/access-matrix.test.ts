import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCell } from '../../src/adapters/authorization-docs.ts';
import { SCOPES, type Scope } from '../../src/domain/scopes.ts';
import {
  AUTHORIZATION_TABLE,
  type Cell,
  cellOf,
  type OwnedObject,
  ownership,
  TABLE_PRINCIPALS,
  type TablePrincipal,
  withoutScope,
} from '../../src/operations/authorization-table.ts';
import type { Operation } from '../../src/operations/define-operation.ts';
import { type OperationName, operations } from '../../src/operations/index.ts';
import { engine, startTestServer, type TestServer } from '../harness.ts';
import { asMcpClient, connectV2, listen, type McpClient } from '../mcp/clients.ts';
import { type Actor, addActor, objectMaker, strangerAgent, tablePrincipal, type Target, withoutScopeAgent } from './access-fixtures.ts';
import { INTERFACE_NAMES, INTERFACES, type Interface, type Observed, viaGraphql, viaMcp, viaRest } from './access-interfaces.ts';
import { ACCESS_REQUESTS, type AccessRequest } from './access-requests.ts';

/**
 * The authorization model, checked cell by cell (issue 36 item 6): for every operation of the
 * registry, every principal of src/operations/authorization-table.ts (and an agent missing the
 * operation's scope), on its own object and on another agent's, over REST, MCP and GraphQL (on
 * one engine; REST on the other), the answer's class (allowed, refused with its status and code, approval) is the table's. Objects are
 * made once per owner and shared, except where a success uses them up.
 */

/**
 * Every interface once, on PostgreSQL where it is configured (it answers in a third of PGlite's
 * time), else on PGlite; on the other engine REST alone: the adapters are the same code on both
 * engines, and the rules' queries run on both through REST.
 */
const everyInterfaceHere = engine === 'postgres' || !process.env.BATON_TEST_DATABASE_URL;
const INTERFACES_HERE: readonly Interface[] = everyInterfaceHere ? INTERFACES : ['rest'];

let t: TestServer;
let make: ReturnType<typeof objectMaker>;
let stranger: Actor;
let event: string;
const actors = new Map<TablePrincipal, Actor>();
/** By scope: an agent holding every scope but it (and agents:admin); under `null`, an agent with none. */
const scopeless = new Map<Scope | null, Actor>();
const clients = new Map<string, McpClient>();
const shared = new Map<string, Target>();
/** Each request by its operation and case, to key the objects it may use up. */
const ACCESS_REQUEST_NAMES = new Map(Object.entries(ACCESS_REQUESTS).flatMap(([name, requests]) => requests.map((r, i) => [r, `${name} ${i}`] as const)));

beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0, webhookIntervalMs: 0 });
  make = objectMaker(t);
  stranger = await strangerAgent(t);
  for (const who of TABLE_PRINCIPALS) actors.set(who, await tablePrincipal(t, who));
  for (const scope of SCOPES) scopeless.set(scope, await withoutScopeAgent(t, scope));
  scopeless.set(null, await addActor(t, 'matrix-no-scopes', 'agent', []));
  if (INTERFACES_HERE.includes('mcp')) {
    const baseUrl = await listen(t);
    await Promise.all([...actors.values(), ...scopeless.values()].map(async (actor) => clients.set(actor.token, asMcpClient(await connectV2(baseUrl, actor.token, 'modern')))));
  }
  const events = await t.request('GET', '/api/v1/events?order=desc&limit=1');
  event = events.json<{ data: { id: string }[] }>().data[0]?.id ?? '';
});
afterAll(async () => {
  for (const client of clients.values()) await client.close();
  await t.close();
});

/**
 * The object a call points at: a fresh one when the call may succeed and use it up; else the
 * owner's shared one (a request that uses objects up shares its own, so a refusal that fails to
 * refuse spoils no other request's cells).
 */
async function objectFor(object: OwnedObject, owner: Actor, request: AccessRequest, cell: Exclude<Cell, null>): Promise<Target> {
  if (request.consumes && admits(cell, { kind: 'allowed' })) return make[object](owner);
  const key = sharedKey(object, owner, request);
  const known = shared.get(key);
  if (known) return known;
  const made = await make[object](owner);
  shared.set(key, made);
  return made;
}

function sharedKey(object: OwnedObject, owner: Actor, request: AccessRequest): string {
  return `${object} ${owner.id}${request.consumes ? ` ${ACCESS_REQUEST_NAMES.get(request)}` : ''}`;
}

function admits(cell: Exclude<Cell, null>, seen: Observed): boolean {
  const options = 'kind' in cell ? [cell] : cell;
  return options.some((o) => o.kind === seen.kind && (o.kind !== 'refused' || (seen.kind === 'refused' && o.status === seen.status && (o.code === undefined || o.code === seen.code))));
}

function describeObserved(seen: Observed): string {
  if (seen.kind === 'refused') return `${seen.status} ${seen.code}`;
  return seen.kind === 'broken' ? `a broken answer: ${seen.detail.slice(0, 300)}` : seen.kind;
}

function send(via: Interface, operation: Operation, input: Record<string, unknown>, caller: Actor): Promise<Observed> {
  if (via === 'rest') return viaRest(t, operation, input, caller.token);
  if (via === 'graphql') return viaGraphql(t, operation, input, caller.token);
  const client = clients.get(caller.token);
  if (!client) throw new Error(`no MCP client for ${caller.id}`);
  return viaMcp(client, operation, input);
}

/** One line per cell of the row that an interface answered otherwise. */
async function mismatches(operation: Operation): Promise<string[]> {
  const name = operation.name as OperationName;
  const row = AUTHORIZATION_TABLE[name] as (typeof AUTHORIZATION_TABLE)[OperationName] | undefined;
  const requests = ACCESS_REQUESTS[name] as readonly AccessRequest[] | undefined;
  if (!row || !requests) return ['no row in src/operations/authorization-table.ts, or no request in test/security/access-requests.ts'];
  const cases = [row, ...(row.also ?? [])];
  if (requests.length !== cases.length) return [`${cases.length} cases in the table, ${requests.length} requests in access-requests.ts`];
  // Streams are not MCP tools, and GraphQL serves them as subscriptions (test/graphql/subscription.test.ts).
  const interfaces = operation.kind === 'stream' ? (['rest'] as const) : INTERFACES_HERE;
  const found: string[] = [];
  for (const [i, access] of cases.entries()) {
    const request = requests[i] as AccessRequest;
    const callers: [string, Actor, Record<'own' | 'others', Cell>][] = TABLE_PRINCIPALS.map((who) => [who.replace('_', ' '), actors.get(who) as Actor, ownership(cellOf(access, who, operation.scope))]);
    const scope = access.scope ?? operation.scope;
    callers.push([`agent without ${scope ?? 'scopes'}`, scopeless.get(scope) as Actor, { own: null, others: scope === null ? ownership(cellOf(access, 'agent', null)).others : withoutScope(scope) }]);
    for (const [who, caller, cells] of callers) {
      for (const whose of access.object === null ? (['others'] as const) : (['own', 'others'] as const)) {
        const cell = cells[whose];
        if (cell === null) continue;
        const owner = whose === 'own' ? caller : stranger;
        for (const via of interfaces) {
          const target = access.object === null ? { id: '', task: '' } : await objectFor(access.object, owner, request, cell);
          const seen = await send(via, operation, request.input({ target, caller, event }), caller);
          // A refusal that let the call through used the shared object up: the next interface gets another.
          if (access.object !== null && request.consumes && seen.kind === 'allowed') shared.delete(sharedKey(access.object, owner, request));
          if (!admits(cell, seen)) {
            const on = access.object === null ? '' : ` on ${whose === 'own' ? 'its own' : "another's"} ${access.object.replace('_', ' ')}`;
            found.push(`${who}, ${access.request}${on}, over ${INTERFACE_NAMES[via]}: the table says ${describeCell(cell)}, the answer was ${describeObserved(seen)}`);
          }
        }
      }
    }
  }
  return found;
}

describe('the authorization table', () => {
  it('has a row for every operation of the registry, and none for an operation that is gone', () => {
    const names = operations.map((op) => op.name);
    expect(names.filter((n) => !(n in AUTHORIZATION_TABLE)), 'add rows to src/operations/authorization-table.ts').toEqual([]);
    expect(Object.keys(AUTHORIZATION_TABLE).filter((n) => !names.includes(n)), 'remove rows from src/operations/authorization-table.ts').toEqual([]);
  });

  it('is served in spec/api.md, a line for every operation', async () => {
    const page = await t.request('GET', '/spec/api.md');
    expect(page.body).not.toContain('<!-- generated:authorization -->');
    const lines = page.body.split('\n');
    expect(operations.filter((op) => !lines.some((line) => line.startsWith(`| \`${op.name}\` |`) && line.split('|').length === 9)).map((op) => op.name)).toEqual([]);
  });

  it("has a request for each of a row's cases", () => {
    const uneven = operations.filter((op) => {
      const row = AUTHORIZATION_TABLE[op.name as OperationName];
      return ACCESS_REQUESTS[op.name as OperationName].length !== 1 + (row.also?.length ?? 0);
    });
    expect(uneven.map((op) => op.name), 'test/security/access-requests.ts').toEqual([]);
  });
});

describe(`every cell of the table, over ${INTERFACES_HERE.map((via) => INTERFACE_NAMES[via]).join(', ')}`, () => {
  for (const operation of operations) {
    it(`${operation.name}`, { timeout: 180_000 }, async () => {
      expect(await mismatches(operation)).toEqual([]);
    });
  }
});
