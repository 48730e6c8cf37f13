import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/tokens.ts';
import { engine } from '../harness.ts';

/*
 * Embedded mode loses nothing it acknowledged when the process dies. PGlite runs with fsync off
 * (`-F`), but its NodeFS passes every write straight to the OS (Emscripten NODEFS → fs.writeSync), and
 * a commit writes its WAL before answering: a killed process leaves it in the page cache. Power loss
 * is another matter; the README says that needs PostgreSQL.
 */

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** Concurrent writers: enough that several requests are always in flight when the kill lands. */
const WRITERS = 8;
/** Acknowledged creates after which the server is killed. */
const KILL_AFTER = 150;
/** Every this many acknowledged creates, a writer also updates the task it just made. */
const UPDATE_EVERY = 5;

interface Baton {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  /** Resolves with the signal that ended the process, or its exit code. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
}

const children: ChildProcess[] = [];
let dataDir: string;
const token = generateToken();

describe.skipIf(engine !== 'pglite')('embedded PGlite survives SIGKILL (pglite only: PostgreSQL’s durability is the server’s own)', () => {
  beforeAll(async () => {
    // A directory of its own around it: a first start leaves the bootstrap token file beside it.
    dataDir = join(await mkdtemp(join(tmpdir(), 'baton-durability-')), 'data');
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dirname(dataDir), { recursive: true, force: true });
  });

  it('keeps every acknowledged write and its event across a SIGKILL mid-stream', { timeout: 300_000 }, async () => {
    const first = await startBaton();

    const created = new Map<string, { key: string; title: string }>(); // acknowledged creates by task id
    const updated = new Map<string, string>(); // task id → acknowledged new title
    let inFlight = 0;
    let inFlightAtKill = -1;
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      inFlightAtKill = inFlight;
      first.child.kill('SIGKILL');
    };
    const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
      inFlight++;
      try {
        const res = await api(first, method, path, { body, headers: { 'idempotency-key': randomUUID(), ...headers } });
        // The body is part of the acknowledgement: a response cut off mid-body acknowledged nothing.
        return { status: res.status, json: (await res.json()) as { id: string } };
      } finally {
        inFlight--;
      }
    };
    const writer = async (n: number) => {
      for (let i = 0; !killed; i++) {
        try {
          const key = randomUUID();
          const title = `writer ${n} task ${i}`;
          const res = await send('POST', '/api/v1/tasks', { title }, { 'idempotency-key': key });
          if (res.status !== 201) throw new Error(`create answered ${res.status} ${JSON.stringify(res.json)}`);
          // A whole response counts even if it is read after the kill: the server sent it.
          created.set(res.json.id, { key, title });
          if (created.size >= KILL_AFTER) return kill();
          if (i % UPDATE_EVERY === UPDATE_EVERY - 1) {
            const renamed = `${title} renamed`;
            const patch = await send('PATCH', `/api/v1/tasks/${res.json.id}`, { title: renamed }, { 'if-match': '"1"' });
            if (patch.status !== 200) throw new Error(`update answered ${patch.status} ${JSON.stringify(patch.json)}`);
            updated.set(res.json.id, renamed);
          }
        } catch (error) {
          if (killed) return; // the connection died with the server: not acknowledged
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, n) => writer(n)));
    expect(await within(first.exited, 15_000, 'the killed server to exit')).toBe('SIGKILL');
    expect(created.size).toBeGreaterThanOrEqual(KILL_AFTER);
    // The kill landed while other writers were waiting on the server, not between requests.
    expect(inFlightAtKill).toBeGreaterThan(0);

    const second = await startBaton();

    // One read of the whole timeline: the subjects of every task.created and task.updated event.
    const events = await pages(second, '/api/v1/events?types=task.created,task.updated&fields=type,subject');
    const createdSubjects = events.filter((event) => event.type === 'task.created').map((event) => event.subject);
    const updatedSubjects = new Set(events.filter((event) => event.type === 'task.updated').map((event) => event.subject));
    const missing: string[] = [];
    for (const [id, { key, title: original }] of created) {
      const read = await api(second, 'GET', `/api/v1/tasks/${id}`);
      if (read.status !== 200) {
        missing.push(`${id}: GET ${read.status}`);
        continue;
      }
      const task = (await read.json()) as { title: string };
      const title = updated.get(id);
      if (title !== undefined && task.title !== title) missing.push(`${id}: title ${JSON.stringify(task.title)}, acknowledged ${JSON.stringify(title)}`);
      if (!createdSubjects.includes(id)) missing.push(`${id}: no task.created`);
      if (title !== undefined && !updatedSubjects.has(id)) missing.push(`${id}: no task.updated`);
      // The stored idempotent response committed with the write: replaying the key returns it.
      const replay = await api(second, 'POST', '/api/v1/tasks', { body: { title: original }, headers: { 'idempotency-key': key } });
      const replayed = (await replay.json()) as { id?: string };
      if (replay.headers.get('idempotency-replayed') !== 'true' || replayed.id !== id) missing.push(`${id}: replay gave ${replay.status} ${replayed.id}`);
    }
    expect(missing).toEqual([]);

    // Consistent as a whole: one task.created per task, no orphan on either side. Writes in flight
    // at the kill may or may not have committed, so there can be more tasks than acknowledged.
    const tasks = new Set((await pages(second, '/api/v1/tasks?fields=id')).map((task) => task.id));
    expect(new Set(createdSubjects)).toEqual(tasks);
    expect(createdSubjects).toHaveLength(tasks.size);
    expect(tasks.size).toBeGreaterThanOrEqual(KILL_AFTER);

    second.child.kill('SIGTERM');
    expect(await within(second.exited, 60_000, 'the restarted server to exit on SIGTERM')).toBe(0);
  });
});

async function api(baton: Baton, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<globalThis.Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${baton.baseUrl}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    signal: AbortSignal.timeout(60_000),
  });
}

/** Every item of a paged list, following `next_cursor` (bounded, so a cursor bug cannot loop forever). */
async function pages(baton: Baton, path: string): Promise<Record<string, string>[]> {
  const items: Record<string, string>[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const separator = path.includes('?') ? '&' : '?';
    const res = await api(baton, 'GET', `${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as { data: Record<string, string>[]; next_cursor: string | null };
    items.push(...body.data);
    cursor = body.next_cursor;
    if (cursor === null) return items;
  }
  throw new Error(`GET ${path} did not end within 1000 pages`);
}

/** Spawns `node src/main.ts` on the shared data dir, as an operator would run it, and waits until /readyz answers 200. */
async function startBaton(): Promise<Baton> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: REPO,
    env: {
      // The kernel picks the port at listen time. A port found free beforehand can be taken by any
      // outgoing connection on the machine while initdb runs, and the listen then fails (EADDRINUSE).
      PORT: '0',
      HOST: '127.0.0.1',
      BATON_DATA_DIR: dataDir,
      BATON_BOOTSTRAP_TOKEN: token,
      BATON_LOG_LEVEL: 'warn',
      // The test makes ~500 requests with one token, often within one window of the default budget.
      BATON_RATE_LIMIT: '1000000/60s',
      PATH: process.env.PATH,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let output = ''; // the tail of stdout and stderr, for failure messages
  let stdout = '';
  let baseUrl: string | undefined;
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
    if (baseUrl === undefined) {
      stdout += chunk.toString();
      baseUrl = /Baton is serving at (http:\/\/[^\s]+)/.exec(stdout)?.[1];
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  // A first start runs initdb, which takes seconds alone and can take a minute on a loaded machine.
  for (let attempt = 0; attempt < 1200; attempt++) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Baton exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`);
    }
    if (baseUrl !== undefined) {
      const status = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
        (res) => res.status,
        () => 0,
      );
      if (status === 200) return { child, baseUrl, exited };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Baton was not ready within 1200 attempts:\n${output}`);
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
