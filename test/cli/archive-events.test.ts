import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { engine, freshDatabase } from '../harness.ts';
import { bootstrapToken, freePort, runBaton, type Started, startBaton } from './run-baton.ts';
import { pollUntil } from '../leases/instances.ts';

/**
 * Retention through the real binary: `baton archive-events` moves old events to a file and deletes
 * them, a webhook that has not sent them holds them back, and a `since` or page cursor into the
 * archived range gets 410 `cursor_archived` on every route that takes one. PGlite allows one process
 * per data directory, so there the server stops while the command runs; PostgreSQL archives online.
 */

let scratch: string;
let serverEnv: Record<string, string>;
let server: Started | undefined;
let url: string;
let token: string;

async function startServer(first = false): Promise<void> {
  server = startBaton(['serve'], serverEnv);
  if (first) token = await bootstrapToken(server);
  else await server.printed(/Baton is serving at/);
}

async function stopServer(): Promise<void> {
  if (!server) return;
  server.child.kill('SIGTERM');
  await server.outcome;
  server = undefined;
}

/** Runs `work` with the database free for a direct command: the server stopped on PGlite, running on PostgreSQL. */
async function besideServer<T>(work: () => Promise<T>): Promise<T> {
  if (engine === 'postgres') return work();
  await stopServer();
  try {
    return await work();
  } finally {
    await startServer();
  }
}

async function api(method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (method !== 'GET') headers['idempotency-key'] = crypto.randomUUID();
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}/api/v1${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as Record<string, unknown> };
}

interface Event {
  id: string;
  type: string;
  subject: string;
  created_at: string;
}

async function allEvents(): Promise<Event[]> {
  const events: Event[] = [];
  let cursor: string | null = null;
  do {
    const page = await api('GET', `/events?order=asc&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    events.push(...(page.body.data as Event[]));
    cursor = page.body.next_cursor as string | null;
  } while (cursor);
  return events;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-archive-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  serverEnv = { PORT: String(port), HOST: '127.0.0.1', BATON_LOG_LEVEL: 'warn', BATON_WEBHOOK_ALLOW_PRIVATE: '1', BATON_SECRET_KEY: 'archive-test-secret-key-0123456789abcdef', BATON_DATA_DIR: join(scratch, 'data') };
  if (engine === 'pglite') {
    serverEnv.BATON_DATA_DIR = join(scratch, 'data');
    const restored = await runBaton(['restore', inject('pgliteDump')], serverEnv);
    expect(restored.code, restored.stderr).toBe(0);
  } else {
    const { database, url: databaseUrl } = await freshDatabase();
    await database.close();
    serverEnv.DATABASE_URL = databaseUrl ?? '';
  }
  await startServer(true);
}, 180_000);

afterAll(async () => {
  await stopServer();
  await rm(scratch, { recursive: true, force: true });
});

it('refuses a cutoff it cannot read or one in the future, touching nothing', async () => {
  const unreadable = await runBaton(['archive-events', '--before', 'last tuesday', '--out', join(scratch, 'never.jsonl')], serverEnv);
  expect(unreadable.code).toBe(2);
  expect(unreadable.stderr).toContain('--before last tuesday: give an ISO date or time');
  const future = await runBaton(['archive-events', '--before', '2999-01-01', '--out', join(scratch, 'never.jsonl')], serverEnv);
  expect(future.code).toBe(2);
  expect(future.stderr).toContain('is in the future');
  await expect(stat(join(scratch, 'never.jsonl'))).rejects.toThrow();
});

it('archives old events to a file, held back by a webhook that has not sent them, then 410s every cursor into them', { timeout: 300_000 }, async () => {
  // A webhook whose receiver refuses every connection: its pending deliveries (retried after 5 s,
  // then 5 min) hold back every event after its creation, as does its cursor until it fans out.
  const webhook = await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  const old: string[] = [];
  for (const title of ['old one', 'old two', 'old three']) old.push((await api('POST', '/tasks', { title })).body.id as string);
  await api('POST', `/tasks/${old[0]}/comments`, { body: 'said before the cutoff' });
  const firstPage = await api('GET', '/events?order=asc&limit=1');
  const staleCursor = firstPage.body.next_cursor as string;
  const kept = (await api('POST', '/tasks', { title: 'new one' })).body.id as string;

  // The list holds settled events only: on the shared test PostgreSQL another database's open
  // transaction may hold the new task's event back for a moment (src/store/events.ts, SETTLED).
  const { before, cutoffEvent } = await pollUntil(
    async () => {
      const listed = await allEvents();
      const created = listed.find((e) => e.subject === kept && e.type === 'task.created');
      return created ? { before: listed, cutoffEvent: created } : undefined;
    },
    60_000,
    'the kept task listed among the events',
  );
  const cutoff = cutoffEvent.created_at;
  const firstKept = before.findIndex((e) => e.created_at >= cutoff);
  const archivable = before.slice(0, firstKept);
  expect(archivable.map((e) => e.subject)).toEqual(expect.arrayContaining(old));
  const out = join(scratch, 'events.jsonl');

  const held = await besideServer(() => runBaton(['archive-events', '--before', cutoff, '--out', out], serverEnv));
  expect(held.code, held.stderr).toBe(0);
  const heldCount = Number(/Archived (\d+) events/.exec(held.stdout)?.[1]);
  expect(heldCount).toBeLessThan(archivable.length);
  expect(held.stderr).toMatch(new RegExp(`webhook ${webhook.body.id as string} (has not yet fanned out|still has a delivery pending)`));

  expect((await api('DELETE', `/webhooks/${webhook.body.id as string}`)).status).toBe(200);
  const run = await besideServer(() => runBaton(['archive-events', '--before', cutoff, '--out', out], serverEnv));
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain(`Archived ${archivable.length - heldCount} events created before ${new Date(cutoff).toISOString()}`);
  expect(run.stderr).not.toContain('Stopped before the cutoff');

  // The file: every archived event once, in commit order, with its seq; readable by its owner only.
  const lines = (await readFile(out, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Event & { seq: string; token_id: unknown });
  expect(lines.map((l) => l.id)).toEqual(archivable.map((e) => e.id));
  expect(lines.every((l) => /^\d+$/.test(l.seq) && 'token_id' in l)).toBe(true);
  expect((await stat(out)).mode & 0o777).toBe(0o600);

  // What is left is served as before, and starts where the archive ends.
  const after = await allEvents();
  expect(after.slice(0, before.length - firstKept).map((e) => e.id)).toEqual(before.slice(firstKept).map((e) => e.id));
  const oldest = after[0]?.id;
  expect(run.stdout).toContain(`The oldest event still served is ${oldest}`);
  expect((await api('GET', `/tasks/${old[0]}`)).status).toBe(200);
  expect((await api('GET', `/tasks/${old[0]}/events`)).body.data).toEqual([]);

  // Every cursor into the archive: a clear 410 naming the oldest cursor still served.
  const archivedId = archivable[1]?.id ?? '';
  const refusals = [
    await api('GET', `/events?since=${archivedId}`),
    await api('GET', `/tasks?since=${archivedId}`),
    await api('GET', `/tasks/${old[0]}/comments?since=${archivedId}`),
    await api('GET', `/events/stream?since=${archivedId}`),
    await api('GET', `/events?order=asc&cursor=${staleCursor}`),
  ];
  for (const refused of refusals) {
    expect(refused.status, JSON.stringify(refused.body)).toBe(410);
    expect(refused.type).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ code: 'cursor_archived', retryable: false, oldest_cursor: oldest });
  }
  const live = (await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' })).body.id as string;
  expect((await api('POST', `/webhooks/${live}/replay?since=${archivedId}`)).body).toMatchObject({ code: 'cursor_archived' });

  // The oldest cursor works; an id never issued is still a 400, not a 410.
  expect((await api('GET', `/events?since=${oldest}`)).status).toBe(200);
  expect((await api('GET', '/events?since=evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ')).body).toMatchObject({ code: 'invalid_parameter' });
});
