import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import {
  createPrincipal,
  createTask,
  expectProblem,
  expectRefusedWithoutWrites,
  type IssuedToken,
  issueToken,
  principalWithToken,
  snapshot,
  whoami,
} from './helpers.ts';

/** Token lifecycle and tool allowlists, as a human admin manages them and an agent feels them. */

let t: TestServer;
/** An agent that may manage its own tokens (agents:admin), but only its own. */
let alice: { id: string; token: string; tokenId: string };
/** For writes refused inside the operation: the refusal itself is stored under the Idempotency-Key, nothing else. */
const REMEMBERED = { keyRemembered: true } as const;

beforeAll(async () => {
  t = await startTestServer();
  alice = await principalWithToken(t, { name: 'alice', scopes: ['tasks:read', 'agents:admin'] }, 'alice-laptop');
});
afterAll(() => t.close());

describe('tokens', () => {
  it('shows the plaintext once: lists carry only the prefix', async () => {
    const agent = await createPrincipal(t, { name: 'once', scopes: ['tasks:read'] });
    const issued = await issueToken(t, agent.id, 'build-box');
    expect(issued.token).toMatch(/^bat_[0-9A-Za-z]{36}$/);
    expect(issued.token.startsWith(issued.prefix)).toBe(true);
    expect(issued.prefix.length).toBeLessThan(issued.token.length / 2);
    const list = await t.request('GET', `/api/v1/agents/${agent.id}/tokens`);
    expect(list.status, list.body).toBe(200);
    expect(list.body).not.toContain(issued.token);
    const listed = list.json<{ data: Record<string, unknown>[] }>().data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: issued.id, prefix: issued.prefix, machine: 'build-box', revoked_at: null });
    expect(listed[0]).not.toHaveProperty('token');
    const read = await t.request('GET', `/api/v1/agents/${agent.id}`);
    expect(read.body).not.toContain(issued.token);
  });

  it('keeps no plaintext token in the database, not even in the stored response of tokens_create (DESIGN §6: stored as SHA-256)', async () => {
    const agent = await createPrincipal(t, { name: 'stored', scopes: ['tasks:read'] });
    const issued = await issueToken(t, agent.id, 'vault');
    const { rows } = await sql<{ source: string }>`
      SELECT source FROM (
        SELECT 'tokens' AS source, to_jsonb(x)::text AS row FROM tokens x UNION ALL
        SELECT 'idempotency_keys', to_jsonb(x)::text FROM idempotency_keys x UNION ALL
        SELECT 'events', to_jsonb(x)::text FROM events x UNION ALL
        SELECT 'approvals', to_jsonb(x)::text FROM approvals x UNION ALL
        SELECT 'agents', to_jsonb(x)::text FROM agents x
      ) dump WHERE position(${issued.token} in row) > 0`.execute(t.database.db);
    expect(rows.map((r) => r.source), 'tables holding the plaintext token').toEqual([]);
  });

  it("refuses scopes beyond the agent's: 400", async () => {
    const agent = await createPrincipal(t, { name: 'narrow', scopes: ['tasks:read'] });
    const problem = await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { body: { machine: 'm1', scopes: ['tasks:read', 'tasks:write'] } }),
      400,
      'validation_failed',
      REMEMBERED,
    );
    expect(problem.detail).toContain('tasks:write');
  });

  it('allows one live token per machine: 409 conflict_state, free again once revoked', async () => {
    const agent = await createPrincipal(t, { name: 'one per machine', scopes: ['tasks:read'] });
    const first = await issueToken(t, agent.id, 'ci-runner');
    await expectRefusedWithoutWrites(t, () => t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { body: { machine: 'ci-runner' } }), 409, 'conflict_state', REMEMBERED);
    expect((await t.request('DELETE', `/api/v1/tokens/${first.id}`)).status).toBe(200);
    const second = await issueToken(t, agent.id, 'ci-runner');
    expect(second.id).not.toBe(first.id);
    expect((await whoami(t, second.token)).token.id).toBe(second.id);
  });

  it("revoking one token leaves the agent's other token working", async () => {
    const agent = await createPrincipal(t, { name: 'two machines', scopes: ['tasks:read'] });
    const [one, two] = [await issueToken(t, agent.id, 'one'), await issueToken(t, agent.id, 'two')];
    const revoked = await t.request('DELETE', `/api/v1/tokens/${one.id}`);
    expect(revoked.status, revoked.body).toBe(200);
    expect(revoked.json<{ revoked_at: string | null }>().revoked_at).not.toBeNull();
    expectProblem(await t.request('GET', '/api/v1/whoami', { token: one.token }), 401, 'invalid_token');
    expectProblem(await t.request('GET', '/api/v1/tasks', { token: one.token }), 401, 'invalid_token');
    expect((await t.request('GET', '/api/v1/tasks', { token: two.token })).status).toBe(200);
  });

  it('lets an agent revoke its own token, not another agent\'s', async () => {
    const spare = await issueToken(t, alice.id, 'alice-spare');
    expect((await t.request('DELETE', `/api/v1/tokens/${spare.id}`, { token: alice.token })).status).toBe(200);
    expectProblem(await t.request('GET', '/api/v1/whoami', { token: spare.token }), 401, 'invalid_token');
    expect((await whoami(t, alice.token)).principal.id).toBe(alice.id);
  });

  it('disabling an agent makes all its tokens 401 at once; enabling it again restores them', async () => {
    const agent = await createPrincipal(t, { name: 'to disable', scopes: ['tasks:read'] });
    const tokens: IssuedToken[] = [await issueToken(t, agent.id, 'a'), await issueToken(t, agent.id, 'b')];
    for (const tok of tokens) expect((await t.request('GET', '/api/v1/tasks', { token: tok.token })).status).toBe(200);
    const off = await t.request('PATCH', `/api/v1/agents/${agent.id}`, { body: { disabled: true } });
    expect(off.status, off.body).toBe(200);
    for (const tok of tokens) expectProblem(await t.request('GET', '/api/v1/tasks', { token: tok.token }), 401, 'invalid_token');
    for (const tok of tokens) expectProblem(await t.request('GET', '/api/v1/whoami', { token: tok.token }), 401, 'invalid_token');
    const on = await t.request('PATCH', `/api/v1/agents/${agent.id}`, { body: { disabled: false } });
    expect(on.status, on.body).toBe(200);
    for (const tok of tokens) expect((await t.request('GET', '/api/v1/tasks', { token: tok.token })).status).toBe(200);
  });

  it("narrowing the agent's scopes narrows its tokens at once", async () => {
    const agent = await createPrincipal(t, { name: 'narrowed', scopes: ['tasks:read', 'tasks:write'] });
    const tok = await issueToken(t, agent.id, 'm');
    expect((await t.request('POST', '/api/v1/tasks', { token: tok.token, body: { title: 'allowed' } })).status).toBe(201);
    const patch = await t.request('PATCH', `/api/v1/agents/${agent.id}`, { body: { scopes: ['tasks:read'] } });
    expect(patch.status, patch.body).toBe(200);
    const problem = expectProblem(await t.request('POST', '/api/v1/tasks', { token: tok.token, body: { title: 'refused' } }), 403, 'forbidden_scope');
    expect(problem.required_scope).toBe('tasks:write');
    expect((await t.request('GET', '/api/v1/tasks', { token: tok.token })).status).toBe(200);
    expect((await whoami(t, tok.token)).scopes).toEqual(['tasks:read']);
  });

  it("a token's own scopes narrow it below its agent's", async () => {
    const agent = await createPrincipal(t, { name: 'read-only token', scopes: ['tasks:read', 'tasks:write'] });
    const tok = await issueToken(t, agent.id, 'm', ['tasks:read']);
    expectProblem(await t.request('POST', '/api/v1/tasks', { token: tok.token, body: { title: 'refused' } }), 403, 'forbidden_scope');
    expect((await t.request('GET', '/api/v1/tasks', { token: tok.token })).status).toBe(200);
  });
});

describe('tool allowlists', () => {
  it('refuses an unknown operation name: 400, on create and on update', async () => {
    const problem = await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', '/api/v1/agents', { body: { name: 'typo', scopes: ['tasks:read'], tool_allowlist: ['tasks_get', 'tasks.lsit'] } }),
      400,
      'validation_failed',
      REMEMBERED,
    );
    expect(problem.detail).toContain('tasks.lsit');
    const agent = await createPrincipal(t, { name: 'listed', scopes: ['tasks:read'] });
    await expectRefusedWithoutWrites(t, () => t.request('PATCH', `/api/v1/agents/${agent.id}`, { body: { tool_allowlist: ['nope'] } }), 400, 'validation_failed', REMEMBERED);
  });

  it('applies a changed allowlist at once; whoami stays open', async () => {
    const agent = await createPrincipal(t, { name: 'allowlisted', scopes: ['tasks:read'] });
    const tok = await issueToken(t, agent.id, 'm');
    const task = await createTask(t, 'readable');
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { token: tok.token })).status).toBe(200);
    const patch = await t.request('PATCH', `/api/v1/agents/${agent.id}`, { body: { tool_allowlist: ['tasks_list'] } });
    expect(patch.status, patch.body).toBe(200);
    const before = await snapshot(t.database.db);
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks/${task.id}`, { token: tok.token }), 403, 'tool_not_allowed');
    expect(problem.operation).toBe('tasks_get');
    expect((await t.request('GET', '/api/v1/tasks', { token: tok.token })).status).toBe(200);
    const me = await whoami(t, tok.token);
    expect(me.can).toEqual(['whoami', 'tasks_list']);
    expect(await snapshot(t.database.db)).toEqual(before);
  });
});
