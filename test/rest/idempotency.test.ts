import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, startTestServer, type TestServer } from '../harness.ts';
import { databaseUrl } from '../postgres-url.ts';
import { countRows, createTask, eventsOf, expectProblem, setTaskState, type TaskBody, taskRow, whoami } from './fixtures.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const create = (body: Record<string, unknown>, key: string | null, token?: string) =>
  t.request('POST', '/api/v1/tasks', { body, key, ...(token ? { token } : {}) });

describe('replaying a write with the same Idempotency-Key', () => {
  it('returns the original 201 byte for byte, marked Idempotency-Replayed, and writes nothing', async () => {
    const key = randomUUID();
    const first = await create({ title: 'only once', labels: ['a'] }, key);
    expect(first.status, first.body).toBe(201);
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    const before = await countRows(t);

    const again = await create({ title: 'only once', labels: ['a'] }, key);
    expect(again.status).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers.location).toBe(first.headers.location);
    expect(await countRows(t)).toEqual(before);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const key = randomUUID();
    const first = await t.request('POST', '/api/v1/tasks', { key, payload: '{"title":"ordered","priority":"high"}' });
    expect(first.status, first.body).toBe(201);
    const again = await t.request('POST', '/api/v1/tasks', { key, payload: '{"priority":"high","title":"ordered"}' });
    expect(again.status).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
  });

  it('replays a PATCH even after the task moved on', async () => {
    const task = await createTask(t);
    const key = randomUUID();
    const first = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { title: 'renamed' }, ifMatch: '"1"' });
    expect(first.status, first.body).toBe(200);
    expect((await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'renamed again' } })).status).toBe(200);
    const eventsBefore = await eventsOf(t, task.id);

    const again = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { title: 'renamed' }, ifMatch: '"1"' });
    expect(again.status).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers.etag).toBe('"2"');
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'renamed again', version: 3 });
    expect(await eventsOf(t, task.id)).toHaveLength(eventsBefore.length);
  });

  it('accepts the key bare or as a quoted string, as the same key', async () => {
    const key = `k-${randomUUID()}`;
    const quoted = await create({ title: 'quoted key' }, `"${key}"`);
    expect(quoted.status, quoted.body).toBe(201);
    const bare = await create({ title: 'quoted key' }, key);
    expect(bare.status).toBe(201);
    expect(bare.headers['idempotency-replayed']).toBe('true');
    expect(bare.body).toBe(quoted.body);
    const rows = await t.database.db.selectFrom('idempotency_keys').select('key').where('key', 'like', `%${key}%`).execute();
    expect(rows.map((r) => r.key)).toEqual([key]);
  });

  it('scopes a key to its principal: two principals use the same key independently', async () => {
    const other = await t.addPrincipal({ kind: 'agent' });
    const key = randomUUID();
    const mine = await create({ title: 'same key, mine' }, key);
    const theirs = await create({ title: 'same key, theirs' }, key, other.token);
    expect(mine.status, mine.body).toBe(201);
    expect(theirs.status, theirs.body).toBe(201);
    expect(theirs.headers['idempotency-replayed']).toBeUndefined();
    expect(theirs.json<TaskBody>().id).not.toBe(mine.json<TaskBody>().id);
    expect(theirs.json<TaskBody>().title).toBe('same key, theirs');

    // Each principal's replay returns its own response.
    const mineAgain = await create({ title: 'same key, mine' }, key);
    expect(mineAgain.body).toBe(mine.body);
    const theirsAgain = await create({ title: 'same key, theirs' }, key, other.token);
    expect(theirsAgain.body).toBe(theirs.body);
  });
});

describe('refusing misuse of a key', () => {
  it('same key with a different body is 422 idempotency_key_reused and writes nothing', async () => {
    const key = randomUUID();
    expect((await create({ title: 'first use' }, key)).status).toBe(201);
    const before = await countRows(t);
    const problem = expectProblem(await create({ title: 'second use' }, key), 422, 'idempotency_key_reused');
    expect(problem.retryable).toBe(false);
    expect(await countRows(t)).toEqual(before);
  });

  it('same key on a different operation is 422 idempotency_key_reused', async () => {
    const task = await createTask(t);
    const key = randomUUID();
    expect((await create({ title: 'for another op' }, key)).status).toBe(201);
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { title: 'for another op' } }), 422, 'idempotency_key_reused');
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'a task', version: 1 });
  });

  it('a write without a key is 400 idempotency_key_required and writes nothing', async () => {
    const task = await createTask(t);
    const before = await countRows(t);
    expectProblem(await create({ title: 'no key' }, null), 400, 'idempotency_key_required');
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key: null, body: { title: 'no key' } }), 400, 'idempotency_key_required');
    expectProblem(await create({ title: 'empty key' }, ''), 400, 'idempotency_key_required');
    expect(await countRows(t)).toEqual(before);
  });

  it('a key over 255 characters is refused; 255 is accepted', async () => {
    const before = await countRows(t);
    expectProblem(await create({ title: 'long key' }, 'k'.repeat(256)), 400, 'idempotency_key_required');
    expect(await countRows(t)).toEqual(before);
    const res = await create({ title: 'long key' }, `${randomUUID()}`.padEnd(255, 'k'));
    expect(res.status, res.body).toBe(201);
  });
});

describe('which outcomes a key remembers', () => {
  it('a non-retryable failure after the handler started (422 invalid_transition) replays the same problem', async () => {
    const task = await createTask(t);
    const key = randomUUID();
    const first = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { status: 'done' } });
    expectProblem(first, 422, 'invalid_transition');

    // The same request would now succeed; the key still answers with its first outcome.
    await setTaskState(t, task.id, 'in_review');
    const before = await countRows(t);
    const again = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { status: 'done' } });
    expect(again.status).toBe(422);
    expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect((await taskRow(t, task.id)).status).toBe('in_review');
    expect(await countRows(t)).toEqual(before);
  });

  it('a 409 conflict_version is not remembered: the same key and body with the right If-Match succeeds', async () => {
    const task = await createTask(t);
    const key = randomUUID();
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { title: 'retry me' }, ifMatch: '"9"' }), 409, 'conflict_version');

    const retried = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { title: 'retry me' }, ifMatch: '"1"' });
    expect(retried.status, retried.body).toBe(200);
    expect(retried.headers['idempotency-replayed']).toBeUndefined();
    expect(retried.json<TaskBody>()).toMatchObject({ title: 'retry me', version: 2 });

    // From now on the key holds the success.
    const replay = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { key, body: { title: 'retry me' }, ifMatch: '"1"' });
    expect(replay.status).toBe(200);
    expect(replay.body).toBe(retried.body);
    expect(replay.headers['idempotency-replayed']).toBe('true');
  });

  it('a request refused before the handler ran (validation) does not use up the key', async () => {
    const key = randomUUID();
    expectProblem(await create({ title: 5 }, key), 400, 'validation_failed');
    const res = await create({ title: 'now valid' }, key);
    expect(res.status, res.body).toBe(201);
    expect(res.headers['idempotency-replayed']).toBeUndefined();
  });

  it.skipIf(engine === 'pglite')(
    'same key still in flight is 409 idempotency_in_progress with Retry-After (PostgreSQL only: PGlite has one connection, so two transactions never overlap)',
    async () => {
      const me = await whoami(t);
      const key = randomUUID();
      const { rows } = await sql<{ name: string }>`SELECT current_database() AS name`.execute(t.database.db);
      const client = new pg.Client({ connectionString: databaseUrl(process.env.BATON_TEST_DATABASE_URL ?? '', rows[0]?.name ?? '') });
      await client.connect();
      try {
        // Hold the key's lock as a concurrent request with the same key would (src/store/idempotency.ts).
        await client.query(`SELECT pg_advisory_lock(hashtextextended($1 || ' ' || $2, 0))`, [me.principal.id, key]);
        const before = await countRows(t);
        const res = await create({ title: 'in flight' }, key);
        const problem = expectProblem(res, 409, 'idempotency_in_progress');
        expect(problem.retryable).toBe(true);
        expect(res.headers['retry-after']).toBe('1');
        expect(await countRows(t)).toEqual(before);

        await client.query(`SELECT pg_advisory_unlock(hashtextextended($1 || ' ' || $2, 0))`, [me.principal.id, key]);
        const retried = await create({ title: 'in flight' }, key);
        expect(retried.status, retried.body).toBe(201);
        expect(retried.headers['idempotency-replayed']).toBeUndefined();
      } finally {
        await client.end();
      }
    },
  );
});
