import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { operations } from '../../src/operations/index.ts';
import { openPostgres } from '../../src/store/database.ts';
import { engine, startTestServer, type TestServer } from '../harness.ts';
import { type ReplicatedPostgres, startReplicatedPostgres } from './replicated-postgres.ts';

/**
 * Reads that may be stale on a read replica (issue 44 §3, spec/api.md "Reads from a replica"):
 * a primary and a streaming standby made by test/ops/replicated-postgres.ts, one Baton in process
 * with DATABASE_URL on the primary and BATON_DATABASE_REPLICA_URL on the standby. With the
 * standby's replay paused, a write is in its answer, in the get by id and in its writer's list,
 * but not in another caller's list, which the standby serves; past the lag bound (the clock
 * moved, never a sleep) that list goes to the primary; with the standby stopped lists still
 * answer, from the primary. PostgreSQL only, from this machine's installation, like the failover test.
 */

/** The server's clock, moved by the test: the lag bound passes without sleeping. */
let at = Date.parse('2026-11-28T12:00:00Z');
const clock: Clock = { now: () => new Date(at) };
const MAX_LAG_S = 60;

let cluster: ReplicatedPostgres | undefined;
let t: TestServer | undefined;

afterAll(async () => {
  await t?.close();
  await cluster?.destroy();
});

async function query<R extends pg.QueryResultRow>(port: number, text: string): Promise<R[]> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'baton' });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Polls, as the helper polls for a synchronous standby: the standby replays in its own time. */
async function untilReplayed(c: ReplicatedPostgres): Promise<void> {
  const [{ lsn } = { lsn: '' }] = await query<{ lsn: string }>(c.primaryPort, 'SELECT pg_current_wal_lsn()::text AS lsn');
  const deadline = Date.now() + 30_000;
  while (!(await query<{ done: boolean }>(c.standbyPort, `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS done`))[0]?.done) {
    if (Date.now() > deadline) throw new Error('the standby did not replay within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it.runIf(engine === 'postgres')('serves lists from the standby within the lag bound; gets, writes and a writer’s own lists from the primary; falls back when the standby lags or stops', { timeout: 120_000 }, async () => {
  cluster = await startReplicatedPostgres();
  const admin = new pg.Client({ host: '127.0.0.1', port: cluster.primaryPort, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE baton').finally(() => admin.end());
  await cluster.addSynchronousStandby();
  const primaryUrl = `postgres://postgres@127.0.0.1:${cluster.primaryPort}/baton`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${cluster.standbyPort}/baton`;
  const database = openPostgres(primaryUrl, 4, { replicaUrl });
  t = await startTestServer({ databaseUrl: primaryUrl, readReplica: { url: replicaUrl, maxLagS: MAX_LAG_S }, sweepIntervalMs: 0, webhookIntervalMs: 0 }, { database, clock });
  const server = t;
  const reader = await server.addPrincipal({ kind: 'human', scopes: ['tasks:read'] });
  const create = async (title: string) => {
    const res = await server.request('POST', '/api/v1/tasks', { body: { title } });
    expect(res.status, res.body).toBe(201);
    return res.json<{ id: string; title: string }>();
  };
  const listed = async (token: string) => {
    const res = await server.request('GET', '/api/v1/tasks?limit=100', { token });
    expect(res.status, res.body).toBe(200);
    return res.json<{ data: { id: string }[] }>().data.map((task) => task.id);
  };
  const served = async () => {
    const text = (await server.request('GET', '/metrics')).body;
    const figure = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return { replica: figure('baton_stale_reads_total\\{database="replica"\\}'), primary: figure('baton_stale_reads_total\\{database="primary"\\}'), lagS: figure('baton_replica_lag_seconds'), up: figure('baton_replica_up') };
  };

  /**
   * Moves the clock one check interval at a time until a list by `reader` is served by the
   * standby: replication is asynchronous in time (the rate counts of every request are written
   * without waiting), so a check may find the standby a moment behind; polled, never timed.
   */
  const untilServedByReplica = async () => {
    const before = await served();
    for (let tries = 0; tries < 100; tries++) {
      at += 1_000;
      const ids = await listed(reader.token);
      if ((await served()).replica > before.replica) return ids;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no list was served by the standby');
  };

  const first = await create('before the pause');
  await untilReplayed(cluster);
  expect(await untilServedByReplica()).toContain(first.id);

  // Replay paused: the standby holds still while the primary moves on.
  await query(cluster.standbyPort, 'SELECT pg_wal_replay_pause()');
  const paused = await served();
  const second = await create('during the pause');
  expect(second.title).toBe('during the pause');
  expect((await server.request('GET', `/api/v1/tasks/${second.id}`, { token: reader.token })).status).toBe(200);
  expect(await listed(reader.token)).not.toContain(second.id);
  // Its writer reads its own write: its lists go to the primary for the lag bound after a write.
  expect(await listed(server.adminToken)).toContain(second.id);
  at += 2_000;
  expect(await listed(reader.token)).not.toContain(second.id);
  const stale = await served();
  expect({ replica: stale.replica - paused.replica, primary: stale.primary - paused.primary }).toEqual({ replica: 2, primary: 1 });
  expect(stale.lagS).toBeGreaterThanOrEqual(2);
  expect(stale.lagS).toBeLessThanOrEqual(MAX_LAG_S);
  expect(stale.up).toBe(1);

  await query(cluster.standbyPort, 'SELECT pg_wal_replay_resume()');
  await untilReplayed(cluster);
  expect(await untilServedByReplica()).toContain(second.id);

  // Past the lag bound, the list goes to the primary.
  await query(cluster.standbyPort, 'SELECT pg_wal_replay_pause()');
  const third = await create('while the standby lags');
  const lagging = await served();
  at += (MAX_LAG_S + 1) * 1000;
  expect(await listed(reader.token)).toContain(third.id);
  const fallen = await served();
  expect({ replica: fallen.replica - lagging.replica, primary: fallen.primary - lagging.primary }).toEqual({ replica: 0, primary: 1 });
  expect(fallen.lagS).toBeGreaterThan(MAX_LAG_S);

  // The standby stops: lists still answer, from the primary.
  await query(cluster.standbyPort, 'SELECT pg_wal_replay_resume()');
  await untilReplayed(cluster);
  expect(await untilServedByReplica()).toContain(third.id);
  await cluster.stopStandby();
  const stopped = await served();
  // Within the check interval the read is tried on the standby, fails, and runs on the primary.
  expect(await listed(reader.token)).toContain(third.id);
  at += 2_000;
  expect(await listed(reader.token)).toContain(third.id);
  const after = await served();
  expect({ replica: after.replica - stopped.replica, primary: after.primary - stopped.primary }).toEqual({ replica: 0, primary: 2 });
  expect(after.up).toBe(0);
});

it('lists in spec/api.md exactly the operations the registry lets a replica serve', async () => {
  const spec = await readFile(new URL('../../spec/api.md', import.meta.url), 'utf8');
  const bullet = /^- \*\*May be stale\*\*:([\s\S]*?)(?=^- \*\*)/m.exec(spec)?.[1] ?? '';
  const listed = [...bullet.matchAll(/`([a-z]+_[a-z_]+)`/g)].map((m) => m[1]);
  const marked = operations.filter((operation) => operation.kind === 'read' && operation.staleReads).map((operation) => operation.name);
  expect(listed.toSorted()).toEqual(marked.toSorted());
  // A read that waits holds no transaction and follows the primary's timeline: never stale.
  expect(operations.filter((operation) => operation.kind === 'read' && operation.staleReads && operation.waits)).toEqual([]);
});
