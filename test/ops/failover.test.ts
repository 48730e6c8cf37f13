import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { generateToken } from '../../src/tokens.ts';
import { freePort, type Started, startNode } from '../cli/run-baton.ts';
import { engine } from '../harness.ts';
import { type ReplicatedPostgres, startReplicatedPostgres } from './replicated-postgres.ts';

/**
 * A database failover under an agent loop (issue 44 §3, docs/operations.md "High availability").
 * The test starts its own primary and synchronous standby (test/ops/replicated-postgres.ts) and one
 * Baton on `postgres://…@primary,standby/baton?target_session_attrs=read-write`. Agents loop
 * create → claim next → heartbeat → hand in; mid-loop the primary is stopped as in a crash and
 * the standby promoted. Baton writes again on the new primary; while it cannot write every
 * request is answered 503 with Retry-After (never 500); no acknowledged write is lost; no task
 * is claimed twice.
 *
 * The primary stops before the standby is promoted, as when a primary fails: promoted first,
 * the old primary would still accept sessions whose commits wait on a standby that left.
 *
 * PostgreSQL only, from this machine's installation (/usr/lib/postgresql/<version>/bin; under
 * root the servers run as the `postgres` user). Missing, the test fails.
 */

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const AGENTS = 4;
/** Cycles before the failure, and after Baton writes again. */
const CYCLES_BEFORE = 8;
const CYCLES_AFTER = 8;
/** A timeout for the whole recovery, not a speed requirement: the figure is reported in bench/README.md. */
const RECOVERY_TIMEOUT_MS = 60_000;

let cluster: ReplicatedPostgres | undefined;
let baton: Started | undefined;

afterAll(async () => {
  if (baton?.child.exitCode === null) baton.child.kill('SIGKILL');
  await cluster?.destroy();
});

interface Unavailable {
  readonly status: number;
  readonly contentType: string | null;
  readonly retryAfter: string | null;
  readonly code: unknown;
}

it.runIf(engine === 'postgres')('follows a promoted standby: 503 with Retry-After meanwhile, no acknowledged write lost, no task claimed twice', { timeout: 120_000 }, async () => {
  cluster = await startReplicatedPostgres();
  const admin = new pg.Client({ host: '127.0.0.1', port: cluster.primaryPort, user: 'postgres', database: 'postgres' });
  await admin.connect();
  await admin.query('CREATE DATABASE baton').finally(() => admin.end());

  const port = await freePort();
  const adminToken = generateToken();
  baton = startNode([MAIN], {
    DATABASE_URL: cluster.url('baton'),
    PORT: String(port),
    HOST: '127.0.0.1',
    BATON_BOOTSTRAP_TOKEN: adminToken,
    BATON_SECRET_KEY: 'failover-test-secret-key-0123456789abcdef',
    BATON_LOG_LEVEL: 'warn',
    BATON_RATE_LIMIT: '1000000/60s',
  });
  // The standby is made while Baton migrates; the agents start once commits wait for it.
  await Promise.all([baton.printed(/Baton is serving at/), cluster.addSynchronousStandby()]);
  const base = `http://127.0.0.1:${port}/api/v1`;

  const unavailable: Unavailable[] = [];
  const failures: string[] = [];
  /** When the standby took writes, and when Baton first acknowledged one after that (performance.now()). */
  const failover: { promotedAt?: number; writesAgainAt?: number } = {};
  /**
   * One request, sent again with the same Idempotency-Key after Retry-After while Baton answers
   * 503: what it acknowledged, or undefined when it failed otherwise (recorded in `failures`).
   */
  async function call<T>(method: string, path: string, token: string, body?: unknown): Promise<T | undefined> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (method !== 'GET') headers['idempotency-key'] = randomUUID();
    if (body !== undefined) headers['content-type'] = 'application/json';
    for (;;) {
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      } catch (error) {
        failures.push(`${method} ${path}: ${(error as Error).message}`);
        return undefined;
      }
      const text = await response.text();
      if (response.ok) {
        if (method !== 'GET' && failover.promotedAt !== undefined) failover.writesAgainAt ??= performance.now();
        return JSON.parse(text) as T;
      }
      if (response.status !== 503) {
        failures.push(`${method} ${path}: ${response.status} ${text}`);
        return undefined;
      }
      const retryAfter = response.headers.get('retry-after');
      if (stopping) {
        failures.push(`${method} ${path}: still 503 when the loop stopped`);
        return undefined;
      }
      unavailable.push({ status: response.status, contentType: response.headers.get('content-type'), retryAfter, code: (JSON.parse(text) as { code?: unknown }).code });
      await new Promise((resolve) => setTimeout(resolve, Number(retryAfter ?? 1) * 1000));
    }
  }

  const tokens: string[] = [];
  for (let i = 0; i < AGENTS; i++) {
    const agent = await call<{ id: string }>('POST', '/agents', adminToken, { name: `failover-agent-${i}`, scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const issued = agent && (await call<{ token: string }>('POST', `/agents/${agent.id}/tokens`, adminToken, { machine: `failover-${i}` }));
    if (!issued) throw new Error(`no agent token: ${failures.join('\n')}`);
    tokens.push(issued.token);
  }

  // What each write acknowledged.
  const created: string[] = [];
  const claims: { task: string; epoch: number }[] = [];
  const handedIn = new Map<string, string>();
  let cycles = 0;
  let stopping = false;
  const waiters: { at: number; resolve: () => void }[] = [];
  const afterCycles = (n: number) => new Promise<void>((resolve) => waiters.push({ at: cycles + n, resolve }));

  async function cycle(token: string, n: number): Promise<void> {
    const task = await call<{ id: string }>('POST', '/tasks', token, { title: `failover ${n}` });
    if (!task) return;
    created.push(task.id);
    const next = await call<{ claims: { task: { id: string }; lease: { id: string; epoch: number } }[] }>('POST', '/tasks/claim', token, {});
    const claim = next?.claims[0];
    if (!claim) return; // another agent took every open task first
    claims.push({ task: claim.task.id, epoch: claim.lease.epoch });
    if (!(await call('POST', `/leases/${claim.lease.id}/heartbeat`, token, {}))) return;
    const summary = `handed in in cycle ${n}`;
    if (await call('POST', `/tasks/${claim.task.id}/hand_in`, token, { summary, lease_epoch: claim.lease.epoch })) handedIn.set(claim.task.id, summary);
  }
  const loops = tokens.map(async (token) => {
    while (!stopping) {
      await cycle(token, cycles);
      cycles += 1;
      for (const w of waiters.filter((w) => w.at <= cycles)) w.resolve();
    }
  });

  await afterCycles(CYCLES_BEFORE);
  const beforeFailure = { created: created.length, handedIn: handedIn.size };
  const stoppedAt = performance.now();
  await cluster.stopPrimary();
  const promotingAt = performance.now();
  await cluster.promoteStandby();
  const promotedAt = (failover.promotedAt = performance.now());
  // Recovered once a write is acknowledged after the promotion; the timeout is a bound, not the figure.
  let timer: NodeJS.Timeout | undefined;
  const recovered = await Promise.race([
    (async () => {
      while (failover.writesAgainAt === undefined) await afterCycles(1);
      return true;
    })(),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), RECOVERY_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  const writesAgainAt = failover.writesAgainAt ?? NaN;
  if (recovered) await afterCycles(CYCLES_AFTER);
  stopping = true;
  await Promise.all(loops);

  expect(recovered, `no write acknowledged within ${RECOVERY_TIMEOUT_MS / 1000} s of the promotion: ${failures.join('\n')}`).toBe(true);
  expect(failures).toEqual([]);
  // While no host took writes, Baton answered problem documents that say when to retry.
  expect(unavailable.length).toBeGreaterThan(0);
  const answers = unavailable.map((u) => ({ status: u.status, problem: /^application\/problem\+json/.test(u.contentType ?? ''), retryAfter: /^\d+$/.test(u.retryAfter ?? ''), code: u.code }));
  expect(answers.filter((a) => !(a.status === 503 && a.problem && a.retryAfter && a.code === 'unavailable'))).toEqual([]);
  expect(created.length).toBeGreaterThan(beforeFailure.created);
  expect(handedIn.size).toBeGreaterThan(beforeFailure.handedIn);

  // Read from the new primary itself: every acknowledged task and hand-in is there, and each task
  // was claimed once (one lease, epoch 1, one task.claimed event).
  const promoted = new pg.Client({ host: '127.0.0.1', port: cluster.standbyPort, user: 'postgres', database: 'baton' });
  await promoted.connect();
  try {
    const { rows: tasks } = await promoted.query<{ id: string; status: string; summary: string | null }>("SELECT id, status, handoff->>'summary' AS summary FROM tasks WHERE id = ANY($1)", [created]);
    expect(tasks).toHaveLength(created.length);
    const byId = new Map(tasks.map((t) => [t.id, t]));
    for (const [id, summary] of handedIn) expect(byId.get(id), id).toMatchObject({ status: 'in_review', summary });

    expect(new Set(claims.map((c) => c.task)).size).toBe(claims.length);
    expect(claims.every((c) => c.epoch === 1)).toBe(true);
    const { rows: leases } = await promoted.query<{ task_id: string; leases: number; max_epoch: number }>(
      'SELECT task_id, count(*)::int AS leases, max(epoch) AS max_epoch FROM leases WHERE task_id = ANY($1) GROUP BY task_id',
      [created],
    );
    for (const l of leases) expect(l, l.task_id).toMatchObject({ leases: 1, max_epoch: 1 });
    for (const c of claims) expect(leases.some((l) => l.task_id === c.task), c.task).toBe(true);
    const { rows: claimedEvents } = await promoted.query<{ subject: string; n: number }>(
      "SELECT subject, count(*)::int AS n FROM events WHERE type = 'task.claimed' AND subject = ANY($1) GROUP BY subject",
      [created],
    );
    expect(claimedEvents.filter((e) => e.n !== 1)).toEqual([]);
    expect(claimedEvents).toHaveLength(leases.length);
  } finally {
    await promoted.end();
  }

  baton.child.kill('SIGTERM');
  expect((await baton.outcome).code).toBe(0);
  // The figures for bench/README.md ("Database failover").
  console.info(
    `failover: pg_ctl promote took ${Math.round(promotedAt - promotingAt)} ms; first write acknowledged ${Math.round(writesAgainAt - promotedAt)} ms after the promotion (${Math.round(writesAgainAt - stoppedAt)} ms after the primary stopped); ${unavailable.length} answers 503; ${created.length} tasks, ${claims.length} claims, ${handedIn.size} hand-ins acknowledged`,
  );
});
