import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, freshDatabase, startTestServer, type TestServer } from '../harness.ts';
import { type EventBody, taskEvents, untilWaitingOnLock } from '../leases/instances.ts';

/*
 * Writes that meet other writes on row and tree locks. A raw SQL transaction plays the other
 * write. PostgreSQL only: PGlite runs one connection at a time, so nothing there ever waits.
 */
describe.skipIf(engine !== 'postgres')('writes meeting other writes on locks', () => {
  let t: TestServer;
  let raw: pg.Client;
  /** The server's log lines at warn and above. */
  const warned: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const fresh = await freshDatabase();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) warned.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    t = await startTestServer({ sweepIntervalMs: 0, webhookIntervalMs: 0 }, { database: fresh.database, logger: pino({ level: 'warn' }, sink) });
    raw = new pg.Client({ connectionString: fresh.url ?? '' });
    await raw.connect();
  });
  afterAll(async () => {
    await raw.end();
    await t.close();
  });

  async function newTask(body: Record<string, unknown>, status?: string): Promise<string> {
    const res = await t.request('POST', '/api/v1/tasks', { body });
    expect(res.status, res.body).toBe(201);
    const id = res.json<{ id: string }>().id;
    if (status) await raw.query('UPDATE tasks SET status = $2 WHERE id = $1', [id, status]);
    return id;
  }

  /*
   * A write the database breaks off to end a deadlock (SQLSTATE 40P01) was rolled back whole, so
   * the server runs it again instead of answering 500. The raw transaction locks the new parent;
   * the request locks its task and waits on that parent (the foreign key check of parent_id); the
   * raw transaction then asks for the task. The request waited first, and the raw session looks for
   * deadlocks after 10 s where it can, so the request's transaction is the one PostgreSQL breaks off.
   */
  it('a write broken off by a deadlock runs again and succeeds once, with one set of events', async () => {
    const parent = await newTask({ title: 'the new parent' });
    const child = await newTask({ title: 'moved under it' });
    // Superusers only; without it the request still looks first, having started to wait first.
    await raw.query("SET deadlock_timeout = '10s'").catch(() => undefined);
    await raw.query('BEGIN');
    await raw.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [parent]);
    const move = t.request('PATCH', `/api/v1/tasks/${child}`, { body: { parent_id: parent } });
    await untilWaitingOnLock(raw, 'the request waiting on the parent');
    await raw.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [child]);
    await raw.query('COMMIT');
    const res = await move;
    expect(res.status, res.body).toBe(200);
    // The operator sees the retry: one warning, with the request's id.
    expect(warned).toEqual([expect.objectContaining({ level: 40, operation: 'tasks_update', sqlstate: '40P01', attempt: 1, request_id: res.headers['x-request-id'] })]);
    // …and can alert on it: /metrics counts the rerun by operation.
    expect((await t.request('GET', '/metrics')).body).toContain('baton_write_reruns_total{operation="tasks_update"} 1\n');
    const updates = (await taskEvents(t, child)).filter((e: EventBody) => e.type === 'task.updated');
    expect(updates.map((e) => e.data.changes)).toEqual([{ parent_id: { from: null, to: parent } }]);
  });

  /*
   * Closing a task takes the database-wide tree lock only when the task has subtasks (it then locks
   * them), so approvals of leaf tasks do not take turns system-wide. The raw transaction holds the
   * tree lock as a parent move in progress does (`lockTaskTree` in src/store/task-tree.ts takes
   * advisory lock (25, 5)).
   */
  it('approves a leaf while the tree lock is held; an approval of a task with subtasks waits its turn', async () => {
    const leaf = await newTask({ title: 'a leaf' }, 'in_review');
    const parent = await newTask({ title: 'a parent' }, 'in_review');
    await newTask({ title: 'its subtask', parent_id: parent }, 'done');
    await raw.query('BEGIN');
    await raw.query('SELECT pg_advisory_xact_lock(25, 5)');
    const approved = await t.request('POST', `/api/v1/tasks/${leaf}/review`, { body: { decision: 'approve' } });
    expect(approved.status, approved.body).toBe(200);
    expect(approved.json<{ status: string }>().status).toBe('done');
    const waiting = t.request('POST', `/api/v1/tasks/${parent}/review`, { body: { decision: 'approve' } });
    await untilWaitingOnLock(raw, 'the parent approval waiting on the tree lock');
    await raw.query('COMMIT');
    const res = await waiting;
    expect(res.status, res.body).toBe(200);
    expect(res.json<{ status: string }>().status).toBe('done');
  });
});
