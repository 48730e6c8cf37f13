import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, expect, inject, it } from 'vitest';
import { generateToken } from '../../src/tokens.ts';
import { freePort, type Started, startNode } from '../cli/run-baton.ts';
import { engine } from '../harness.ts';
import { databaseUrl } from '../postgres-url.ts';

/**
 * A rolling deploy and its rollback (issue 37 §2, migrations/README.md): the last release in
 * releases.json serves an agent loop on PostgreSQL; the current code starts beside it on the same
 * database and migrates it while the old one serves; both serve the loop; the new one is stopped
 * (a rollback) and the old one keeps serving. Nothing fails and nothing is lost. A restarted
 * instance of 0.2.0 refuses the newer migrations (0.2.0 predates expand/contract; the current code
 * starts on a newer release's expand migrations: test/store/migrations.test.ts).
 *
 * PostgreSQL only (PGlite has one process). It needs git and this repository's history: missing,
 * the test fails.
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

interface Release {
  version: string;
  commit: string;
}

const started: Started[] = [];
let scratch: string | undefined;

afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** The release's files (git archive: nothing is registered in the repository), with this checkout's node_modules. */
async function checkOut(release: Release, dir: string): Promise<void> {
  const tar = join(dir, '..', 'release.tar');
  await run('git', ['-C', REPO, 'archive', '--format=tar', '-o', tar, release.commit]);
  await run('tar', ['-xf', tar, '-C', dir]);
  // The release's dependencies are a subset of this checkout's, at the same versions (checked below).
  await symlink(join(REPO, 'node_modules'), join(dir, 'node_modules'));
}

/** An empty database, dropped with the run's others by test/setup-postgres.ts. */
async function emptyDatabase(): Promise<string> {
  const adminUrl = process.env.BATON_TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('BATON_TEST_DATABASE_URL is not set');
  const name = `${inject('postgresRunId')}_rolling`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(adminUrl, name);
}

interface Instance {
  readonly url: string;
  readonly process: Started;
}

async function startInstance(main: string, env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const process = startNode([main], { ...env, PORT: String(port), HOST: '127.0.0.1' });
  started.push(process);
  await process.printed(/Baton is serving at/);
  return { url: `http://127.0.0.1:${port}`, process };
}

async function stop(instance: Instance): Promise<number | null> {
  instance.process.child.kill('SIGTERM');
  return (await instance.process.outcome).code;
}

/** Log lines at error level or above (pino JSON on stdout). */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /"level":(5|6)0/.test(line));
}

it.runIf(engine === 'postgres')('the previous release keeps serving while the current code migrates beside it, and after it is rolled back', { timeout: 150_000 }, async () => {
  const { releases } = JSON.parse(await readFile(join(REPO, 'releases.json'), 'utf8')) as { releases: Release[] };
  const release = releases.at(-1);
  if (!release) throw new Error('releases.json lists no release');
  scratch = await mkdtemp(join(tmpdir(), 'baton-rolling-'));
  const oldDir = join(scratch, `baton-${release.version}`);
  await run('mkdir', [oldDir]);
  await checkOut(release, oldDir);
  const oldPackage = JSON.parse(await readFile(join(oldDir, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const ourPackage = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(oldPackage.version).toBe(release.version);
  for (const [name, version] of Object.entries(oldPackage.dependencies)) expect(ourPackage.dependencies[name], `${release.version} depends on ${name}@${version}`).toBe(version);

  const adminToken = generateToken();
  const env = {
    DATABASE_URL: await emptyDatabase(),
    BATON_BOOTSTRAP_TOKEN: adminToken,
    BATON_SECRET_KEY: 'rolling-upgrade-secret-key-0123456789abcdef',
    BATON_LOG_LEVEL: 'warn',
    // The loop's requests, across both instances, stay far inside it.
    BATON_RATE_LIMIT: '1000000/60s',
  };
  const old = await startInstance(join(oldDir, 'src/main.ts'), env);

  // The balancer: each request goes to the next instance in rotation.
  const rotation: string[] = [old.url];
  let turn = 0;
  const servedBy = new Map<string, number>();
  const failures: string[] = [];
  // Answers a client retries as the problem says (retryable, same Idempotency-Key), and the retry succeeded.
  const retried: string[] = [];
  /**
   * One request, as a careful client sends it: a retryable problem or a broken connection is tried
   * once more, on the next instance, with the same Idempotency-Key. 0.2.0 answers a statement it
   * prepared before a migration changed its table's columns with one retryable 503 per connection
   * (then prepares afresh); a request cut off by an instance stopping may or may not have been
   * applied. A retry that fails too is a failure.
   */
  async function call<T>(method: string, path: string, token: string, body?: unknown): Promise<T | undefined> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (method !== 'GET') headers['idempotency-key'] = randomUUID();
    if (body !== undefined) headers['content-type'] = 'application/json';
    let first: string | undefined;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const base = rotation[turn++ % rotation.length] ?? old.url;
      let outcome: string;
      try {
        const response = await fetch(`${base}/api/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        const text = await response.text();
        servedBy.set(base, (servedBy.get(base) ?? 0) + 1);
        if (response.ok) {
          if (first !== undefined) retried.push(first);
          return JSON.parse(text) as T;
        }
        outcome = `${method} ${path} on ${base}: ${response.status} ${text}`;
        if (!(response.status === 503 && (JSON.parse(text) as { retryable?: boolean }).retryable === true)) break;
      } catch (error) {
        outcome = `${method} ${path} on ${base}: ${(error as Error).message}`;
      }
      if (first !== undefined) {
        failures.push(`${first}\n  then ${outcome}`);
        return undefined;
      }
      first = outcome;
    }
    failures.push(first ?? `${method} ${path}: refused`);
    return undefined;
  }

  const agent = await call<{ id: string }>('POST', '/agents', adminToken, { name: 'rolling-agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  const issued = agent && (await call<{ token: string }>('POST', `/agents/${agent.id}/tokens`, adminToken, { machine: 'rolling' }));
  if (!issued) throw new Error(`no agent token: ${failures.join('\n')}`);
  const token = issued.token;

  // What each write acknowledged: created tasks, and the summary each hand-in was acknowledged with.
  const created: string[] = [];
  const handedIn = new Map<string, string>();
  let cycles = 0;
  let stopping = false;
  const waiters: { at: number; resolve: () => void }[] = [];
  const afterCycles = (n: number) => new Promise<void>((resolve) => waiters.push({ at: cycles + n, resolve }));
  async function cycle(): Promise<void> {
    const task = await call<{ id: string }>('POST', '/tasks', token, { title: `rolling ${cycles}` });
    if (!task) return;
    created.push(task.id);
    const claimed = await call<{ lease: { id: string; epoch: number } }>('POST', `/tasks/${task.id}/claim`, token, {});
    if (!claimed) return;
    if (!(await call('POST', `/leases/${claimed.lease.id}/heartbeat`, token, {}))) return;
    const summary = `done in cycle ${cycles}`;
    const handed = await call<{ status: string }>('POST', `/tasks/${task.id}/hand_in`, token, { summary, lease_epoch: claimed.lease.epoch });
    if (handed) handedIn.set(task.id, summary);
  }
  const loop = (async () => {
    while (!stopping) {
      await cycle();
      cycles += 1;
      for (const w of waiters.filter((w) => w.at <= cycles)) w.resolve();
    }
  })();

  await afterCycles(3);
  // The current code starts on the same database and migrates it while the old one serves.
  const current = await startInstance(join(REPO, 'src/main.ts'), env);
  rotation.push(current.url);
  await afterCycles(10);
  const servedByCurrent = servedBy.get(current.url) ?? 0;
  // Rollback: the balancer takes the new instance out, then it stops (draining what it serves).
  rotation.splice(rotation.indexOf(current.url), 1);
  const before = turn;
  expect(await stop(current)).toBe(0);
  await afterCycles(3);
  // A restart of the old release after the migration: 0.2.0 predates expand/contract and refuses.
  const restarted = startNode([join(oldDir, 'src/main.ts')], { ...env, PORT: String(await freePort()), HOST: '127.0.0.1' });
  started.push(restarted);
  const refusal = await restarted.outcome;
  stopping = true;
  await loop;

  expect(failures).toEqual([]);
  // Each old connection's stale statements answer once; a handful in all, never most of the loop.
  expect(retried.length, retried.join('\n')).toBeLessThan(cycles);
  expect(servedByCurrent).toBeGreaterThan(0);
  expect(turn - before).toBeGreaterThan(0);
  expect(refusal.code).toBe(1);
  expect(refusal.stderr).toMatch(/^The database has migrations this version of Baton does not know \(0075_events_actor_seq, 0080_cursor_key, 0090_tasks_blocked_by_index[,)]/);
  // 0.2.0 logs the stale prepared statements it answered with a retryable 503 (above); nothing else.
  expect(errorLines(old.process.output()).filter((line) => !line.includes('cached plan must not change result type')), old.process.output()).toEqual([]);
  expect(errorLines(current.process.output()), current.process.output()).toEqual([]);

  // Nothing lost: every acknowledged task and hand-in is there, and every task's own events are
  // the same sequence whichever instances served its writes.
  const db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  try {
    const { rows: tasks } = await db.query<{ id: string; status: string; summary: string | null }>(
      "SELECT id, status, handoff->>'summary' AS summary FROM tasks WHERE id = ANY($1)",
      [created],
    );
    expect(tasks).toHaveLength(created.length);
    for (const t of tasks) {
      expect(t.status, t.id).toBe('in_review');
      expect(t.summary, t.id).toBe(handedIn.get(t.id));
    }
    expect(handedIn.size).toBe(created.length);
    const { rows: events } = await db.query<{ subject: string; type: string }>('SELECT subject, type FROM events WHERE subject = ANY($1) ORDER BY seq', [created]);
    const bySubject = new Map<string, string[]>();
    for (const e of events) bySubject.set(e.subject, [...(bySubject.get(e.subject) ?? []), e.type]);
    const first = bySubject.get(created[0] ?? '');
    expect(first).toContain('task.created');
    for (const id of created) expect(bySubject.get(id), id).toEqual(first);
  } finally {
    await db.end();
  }
  expect(await stop(old)).toBe(0);
});
