import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const liveTokens = async (agentId: string, machine: string) =>
  (await t.database.db.selectFrom('tokens').select('id').where('agent_id', '=', agentId).where('machine', '=', machine).where('revoked_at', 'is', null).execute()).length;

describe('one live token per principal and machine, under any concurrency', () => {
  it('20 concurrent tokens_create for one machine: one 201, nineteen 409 conflict_state, one live token', async () => {
    const made = await t.request('POST', '/api/v1/agents', { body: { name: 'racer', kind: 'agent', scopes: ['tasks:read'] } });
    expect(made.status, made.body).toBe(201);
    const agent = made.json<{ id: string }>();
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { body: { machine: 'laptop' } })));
    const created = answers.filter((res) => res.status === 201);
    expect(created).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 201)) {
      const problem = expectProblem(res, 409, 'conflict_state');
      expect(problem.retryable).toBe(false);
    }
    expect(await liveTokens(agent.id, 'laptop')).toBe(1);
    const events = await t.database.db.selectFrom('events').select('id').where('type', '=', 'token.created').where('data', '@>', { agent_id: agent.id } as never).execute();
    expect(events).toHaveLength(1);

    // Revoking frees the label again.
    const [winner] = created;
    const revoked = await t.request('DELETE', `/api/v1/tokens/${winner?.json<{ id: string }>().id ?? ''}`);
    expect(revoked.status, revoked.body).toBe(200);
    const again = await t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { body: { machine: 'laptop' } });
    expect(again.status, again.body).toBe(201);
    expect(await liveTokens(agent.id, 'laptop')).toBe(1);
  });

  it('the database itself refuses a second live token for the same machine', async () => {
    const agentId = (await t.request('GET', '/api/v1/whoami').then((r) => r.json<{ principal: { id: string } }>())).principal.id;
    const row = await t.database.db.selectFrom('tokens').selectAll().where('agent_id', '=', agentId).executeTakeFirstOrThrow();
    await expect(
      t.database.db
        .insertInto('tokens')
        .values({ ...row, id: 'tok_01JZZZZZZZZZZZZZZZZZZZZZZZ', token_hash: Buffer.alloc(32, 7), last_used_at: undefined } as never)
        .execute(),
    ).rejects.toThrow(/tokens_one_live_per_machine|unique/);
  });
});
