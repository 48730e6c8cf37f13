import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateToken } from '../../src/tokens.ts';
import { runBaton } from '../cli/run-baton.ts';
import { engine, freshDatabase } from '../harness.ts';
import { type Claim, type EventBody, getTask, type LeaseBody, pages, type Requester, send } from './instances.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

interface Baton extends Requester {
  readonly child: ChildProcess;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  /** The tail of the child's stdout and stderr, for failure messages. */
  output(): string;
}

const children: ChildProcess[] = [];
const token = generateToken();
let dataDir: string;
/** Where the server keeps its data: a PGlite directory, or a fresh PostgreSQL database. */
let storage: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'baton-resume-'));
  if (engine === 'pglite') {
    storage = { BATON_DATA_DIR: dataDir };
    // A migrated database, as the suite's other files start from: creating one costs PGlite seconds (test/cli/startup.test.ts covers it).
    const restored = await runBaton(['restore', inject('pgliteDump')], storage);
    expect(restored.code, restored.stderr).toBe(0);
  } else {
    const { database, url } = await freshDatabase();
    await database.close();
    storage = { DATABASE_URL: url ?? '' };
  }
});

afterAll(async () => {
  const running = children.filter((child) => child.exitCode === null && child.signalCode === null);
  await Promise.all(
    running.map(
      (child) =>
        new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGKILL');
        }),
    ),
  );
  await rm(dataDir, { recursive: true, force: true });
});

// There is no agent-management route yet, so the work is done with the bootstrap admin token: the
// admin is a human principal, which may claim, heartbeat and move its own task like an agent would.
describe('resuming after a crash, across real server processes', () => {
  it('a fresh client holding only its token finds its lease, the task and the events it missed, and finishes', { timeout: 180_000 }, async () => {
    const first = await startBaton();
    await waitReady(first);
    const created = await first.request('POST', '/api/v1/tasks', { body: { title: 'survive the crash' } });
    expect(created.status, created.body).toBe(201);
    const taskId = created.json<{ id: string }>().id;

    // The agent's first life: claim, note the last event it has seen, heartbeat with a note, crash.
    const lastSeen = await firstLife(first, taskId);
    first.child.kill('SIGKILL');
    expect(await within(first.exited, 15_000, 'the killed server to exit')).toBe('SIGKILL');

    const second = await startBaton();
    await waitReady(second);
    // The task changes while the agent is away: an edit by a human (the same admin here, for want of a second principal).
    const edited = await second.request('PATCH', `/api/v1/tasks/${taskId}`, { body: { description: 'edited while the agent was away' } });
    expect(edited.status, edited.body).toBe(200);

    // The second life knows only the token (and the last event id it had recorded).
    const me = await second.request('GET', '/api/v1/whoami');
    expect(me.status, me.body).toBe(200);
    expect(me.json<{ open_leases: number }>().open_leases).toBeGreaterThanOrEqual(1);

    const leases = await second.request('GET', '/api/v1/leases?holder=me&state=active');
    expect(leases.status, leases.body).toBe(200);
    const lease = leases.json<{ data: LeaseBody[] }>().data.find((l) => l.task_id === taskId);
    expect(lease).toMatchObject({ state: 'active', epoch: 1 });

    const task = await getTask(second, lease?.task_id ?? '');
    expect(task).toMatchObject({ id: taskId, status: 'in_progress', lease: { id: lease?.id, epoch: 1 } });

    const all = await pages<EventBody>(second, `/api/v1/tasks/${taskId}/events`);
    const missed = await pages<EventBody>(second, `/api/v1/tasks/${taskId}/events?since=${lastSeen}`);
    // Only what came after the last event it saw, with nothing skipped: the tail of the whole history.
    expect(missed.map((e) => e.id)).toEqual(all.slice(all.findIndex((e) => e.id === lastSeen) + 1).map((e) => e.id));
    expect(missed.map((e) => e.type)).toEqual(['lease.renewed', 'task.updated']);
    expect(missed[0]?.data).toMatchObject({ lease_id: lease?.id, note: 'halfway through' });

    const done = await second.request('PATCH', `/api/v1/tasks/${taskId}`, { body: { status: 'in_review', lease_epoch: lease?.epoch }, ifMatch: `"${task.version}"` });
    expect(done.status, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'in_review', lease: null });

    second.child.kill('SIGTERM');
    expect(await within(second.exited, 15_000, 'the restarted server to exit on SIGTERM')).toBe(0);
  });
});

/** Claims the task, reads its history (remembering the newest event id), heartbeats with a note. Returns that id. */
async function firstLife(baton: Baton, taskId: string): Promise<string> {
  const claimed = await baton.request('POST', `/api/v1/tasks/${taskId}/claim`, { body: {} });
  expect(claimed.status, claimed.body).toBe(200);
  const { lease } = claimed.json<Claim>();
  const seen = await pages<EventBody>(baton, `/api/v1/tasks/${taskId}/events`);
  expect(seen.map((e) => e.type)).toEqual(['task.created', 'task.claimed', 'task.status_changed']);
  const beat = await baton.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: { note: 'halfway through' } });
  expect(beat.status, beat.body).toBe(200);
  const lastSeen = seen.at(-1)?.id;
  if (!lastSeen) throw new Error('no events seen');
  return lastSeen;
}

/** Spawns `node src/main.ts` on this test's storage and a free port, as an operator would run it. */
async function startBaton(): Promise<Baton> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: REPO,
    env: { ...storage, PORT: String(port), HOST: '127.0.0.1', BATON_BOOTSTRAP_TOKEN: token, BATON_LOG_LEVEL: 'warn', PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  return { child, exited, output: () => output, request: (method, url, options) => send(baseUrl, token, method, url, options) };
}

async function waitReady(baton: Baton): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (baton.child.exitCode !== null || baton.child.signalCode !== null) {
      throw new Error(`Baton exited (${baton.child.exitCode ?? baton.child.signalCode}) before it was ready:\n${baton.output()}`);
    }
    const status = await baton.request('GET', '/readyz').then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Baton was not ready within 600 attempts:\n${baton.output()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
