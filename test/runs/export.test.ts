import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { createIds } from '../../src/ids.ts';
import { appendEvents, type NewEventRow } from '../../src/store/events.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, expectProblem } from '../rest/fixtures.ts';
import { eventsSettled } from '../leases/instances.ts';
import { reachNextSeqDigit } from '../store/next-seq-digit.ts';
import { listen } from '../mcp/clients.ts';
import { runBaton } from '../cli/run-baton.ts';

/**
 * Export (issue 41 §4, spec/runs.md "Export"): runs and usage of a window made through the public
 * API on a clock the test moves, counted by hand; a few thousand events streamed as JSON lines and
 * CSV page by page; the window's edges; CSV quoting and the formula guard; who may export; the CLI.
 */
let at = new Date('2026-11-20T08:59:59.999Z');
const clock: Clock = { now: () => new Date(at) };
const moveTo = (iso: string) => (at = new Date(iso));

/** A model name an agent chose: a formula, a comma, quotes and a line break, all of which a CSV must carry inertly. */
const HOSTILE_MODEL = '=HYPERLINK("http://x.test","y"),\nnext';
const FROM = '2026-11-20T09:00:00Z';
const TO = '2026-11-20T12:00:00Z';
/** The seeded events' window: a day of their own, far from the API's. */
const EVENTS_FROM = '2026-06-01';
const EVENTS_TO = '2026-06-02';
const SEEDED = 3000;

let t: TestServer;
let a: Principal;
let b: Principal;
let runs: string[] = [];
/** The server on a real port: a chunked response and the CLI need one. */
let base: string;
const statements: string[] = [];

beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 }, { clock, onQuery: (text) => statements.push(text) });
  a = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  b = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  runs = await seedRuns();
  await seedEvents();
  base = await listen(t);
});
afterAll(() => t.close());

async function ok(method: string, url: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await t.request(method, url, { body, ...(token ? { token } : {}) });
  expect(res.status, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
}
const claim = async (who: Principal, ttl_s = 3600) => {
  const task = (await createTask(t, { title: 'exported' })).id;
  return ((await ok('POST', `/api/v1/tasks/${task}/claim`, { ttl_s }, who.token)).lease as { id: string }).id;
};

/**
 * 08:59:59.999 A claims (before the window). 09:00:00 A claims (at its start), reports twice, releases.
 * 10:00 B claims, reports with a hostile model name, releases. 11:00 B claims, logs a line, lets it
 * lapse after 300 s (no usage). 12:00 A claims (at the window's end, outside it).
 */
async function seedRuns(): Promise<string[]> {
  await claim(a);
  moveTo('2026-11-20T09:00:00.000Z');
  const r1 = await claim(a);
  await ok('POST', `/api/v1/leases/${r1}/usage`, { input_tokens: 1000, output_tokens: 200, cost: 0.5, model: 'm-1', tool_calls: 2 }, a.token);
  await ok('POST', `/api/v1/leases/${r1}/heartbeat`, { usage: { input_tokens: 500 } }, a.token);
  moveTo('2026-11-20T09:30:00.000Z');
  await ok('POST', `/api/v1/leases/${r1}/release`, {}, a.token);
  moveTo('2026-11-20T10:00:00.000Z');
  const r2 = await claim(b);
  await ok('POST', `/api/v1/leases/${r2}/usage`, { output_tokens: 10, cost: 0.25, currency: 'EUR', model: HOSTILE_MODEL }, b.token);
  moveTo('2026-11-20T10:01:00.000Z');
  await ok('POST', `/api/v1/leases/${r2}/release`, {}, b.token);
  moveTo('2026-11-20T11:00:00.000Z');
  const r3 = await claim(b, 300);
  await ok('POST', `/api/v1/leases/${r3}/log`, { lines: ['started'] }, b.token);
  moveTo('2026-11-20T12:00:00.000Z');
  await claim(a);
  return [r1, r2, r3];
}

/**
 * Test setup, not behaviour under test: 3,000 events by the store's own append (3,000 API writes are
 * slow on PGlite), 20 ms apart from the window's start, plus one a millisecond before it, one a
 * millisecond before its end (in) and one at its end (out).
 */
async function seedEvents(): Promise<void> {
  const ids = createIds();
  const start = Date.parse(EVENTS_FROM);
  const end = Date.parse(EVENTS_TO);
  const event = (ms: number, n: number): NewEventRow => ({
    id: ids.make('evt'),
    type: 'task.updated',
    subject: 'tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV',
    actor_id: a.id,
    actor_kind: 'agent',
    token_id: null,
    machine: null,
    idempotency_key: null,
    data: { n, note: 'a, "quoted"\nline' },
    created_at: new Date(ms),
  });
  const rows = [event(start - 1, -1), ...Array.from({ length: SEEDED }, (_, n) => event(start + n * 20, n)), event(end - 1, SEEDED), event(end, SEEDED + 1)];
  await t.database.db.transaction().execute((tx) => appendEvents(tx, rows));
}

/** RFC 4180 records: quoted cells may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
      i++;
    } else cell += c;
  }
  expect(cell, 'the last record ends with CRLF').toBe('');
  return records;
}

const exportUrl = (dataset: string, from = FROM, to = TO) => `/api/v1/exports/${dataset}?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;

async function download(dataset: string, accept: string, from?: string, to?: string) {
  const res = await t.request('GET', exportUrl(dataset, from, to), { headers: { accept } });
  expect(res.status, res.body).toBe(200);
  return res;
}

describe('export', () => {
  it('exports the runs of a window as JSON lines, matching a hand count, its edges kept', async () => {
    const res = await download('runs', 'application/x-ndjson');
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="runs.jsonl"');
    const rows = res.body.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toEqual([
      { id: runs[0], task_id: expect.any(String) as unknown, agent_id: a.id, agent_kind: 'agent', machine: 'test-machine', outcome: 'released', started_at: '2026-11-20T09:00:00.000Z', ended_at: '2026-11-20T09:30:00.000Z', duration_s: 1800, log_lines: 0 },
      expect.objectContaining({ id: runs[1], agent_id: b.id, outcome: 'released', duration_s: 60 }),
      // The lease lapsed at its expiry (300 s), before the export read it.
      expect.objectContaining({ id: runs[2], agent_id: b.id, outcome: 'lapsed', ended_at: '2026-11-20T11:05:00.000Z', duration_s: 300, log_lines: 1 }),
    ]);
  });

  it('exports usage per run as CSV: a header, quoting, and no formula a spreadsheet would run', async () => {
    const res = await download('usage', 'text/csv');
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const [header, ...records] = parseCsv(res.body);
    expect(header).toEqual(['run_id', 'task_id', 'agent_id', 'started_at', 'ended_at', 'model', 'currency', 'input_tokens', 'output_tokens', 'tool_calls', 'cost', 'reports']);
    // The lapsed run reported nothing: not a usage row.
    expect(records.map((r) => r[0])).toEqual([runs[0], runs[1]]);
    expect(records[0]?.slice(5)).toEqual(['m-1', 'USD', '1500', '200', '2', '0.5', '2']);
    expect(records[1]?.slice(5)).toEqual([`'${HOSTILE_MODEL}`, 'EUR', '0', '10', '0', '0.25', '1']);
    expect(res.body).toContain(`"'=HYPERLINK(""http://x.test"",""y""),\nnext"`);
  });

  it('answers a bounded JSON page without Accept, and its cursor continues the same window', async () => {
    const first = await t.request('GET', `${exportUrl('runs')}&limit=2`);
    expect(first.status, first.body).toBe(200);
    const page = first.json<{ dataset: string; columns: string[]; data: { id: string }[]; has_more: boolean; next_cursor: string }>();
    expect(page).toMatchObject({ dataset: 'runs', has_more: true });
    expect(page.columns[0]).toBe('id');
    const rest = (await t.request('GET', `${exportUrl('runs')}&cursor=${page.next_cursor}`)).json<{ data: { id: string }[]; has_more: boolean }>();
    expect([...page.data, ...rest.data].map((r) => r.id)).toEqual(runs);
    expect(rest.has_more).toBe(false);
    // An empty window: the header alone, or nothing.
    expect((await download('runs', 'text/csv', '2020-01-01', '2020-01-02')).body).toBe(`${page.columns.join(',')}\r\n`);
    expect((await download('usage', 'application/x-ndjson', '2020-01-01', '2020-01-02')).body).toBe('');
    expectProblem(await t.request('GET', `${exportUrl('events')}&cursor=${page.next_cursor}`), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', exportUrl('runs', TO, FROM)), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', exportUrl('runs', '2026-02-30', TO)), 400, 'invalid_parameter');
  });

  it('streams a few thousand events page by page, chunked, the window [from, to) exact', async () => {
    // An export reads settled events only: on a shared PostgreSQL another database's open transaction can hold them back a moment.
    await eventsSettled(t);
    const before = statements.length;
    const response = await fetch(`${base}${exportUrl('events', EVENTS_FROM, EVENTS_TO)}`, { headers: { authorization: `Bearer ${t.adminToken}`, accept: 'text/csv' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-length')).toBeNull();
    let chunks = 0;
    let text = '';
    const decoder = new TextDecoder();
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      chunks++;
      text += decoder.decode(read.value, { stream: true });
    }
    const [header, ...records] = parseCsv(text);
    expect(header?.at(-1)).toBe('data');
    // The event a millisecond before the window and the one at its end are out; the one a millisecond before its end is in.
    expect(records.map((r) => (JSON.parse(r.at(-1) ?? '') as { n: number }).n)).toEqual(Array.from({ length: SEEDED + 1 }, (_, n) => n));
    expect(JSON.parse(records[0]?.at(-1) ?? '')).toEqual({ n: 0, note: 'a, "quoted"\nline' });
    // One read of at most 100 rows per page, each written as it came: never the whole window at once.
    const pages = statements.slice(before).filter((s) => /from "events" where "created_at" >=/.test(s));
    expect(pages).toHaveLength(Math.ceil((SEEDED + 1) / 100));
    expect(chunks).toBeGreaterThan(1);
  });

  it('pages events in commit order when their seq numbers grow a digit (ordered as numbers, not as text)', async () => {
    // Seqs order as numbers, not as text: the timeline crosses a change in their length.
    moveTo('2026-07-01T10:00:00Z');
    const made = [(await createTask(t, { title: 'short seq 1' })).id, (await createTask(t, { title: 'short seq 2' })).id];
    await reachNextSeqDigit(t);
    made.push((await createTask(t, { title: 'long seq 1' })).id, (await createTask(t, { title: 'long seq 2' })).id);
    await eventsSettled(t);
    const rows: { id: string; type: string; subject: string }[] = [];
    for (let cursor = ''; ; ) {
      const page = (await t.request('GET', `${exportUrl('events', '2026-07-01', '2026-07-02')}&limit=1${cursor}`)).json<{ data: typeof rows; has_more: boolean; next_cursor: string }>();
      rows.push(...page.data);
      if (!page.has_more) break;
      cursor = `&cursor=${page.next_cursor}`;
    }
    expect(rows.filter((r) => r.type === 'task.created').map((r) => r.subject)).toEqual(made);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  });

  it('is for human admins and owners: a member and an agent admin are refused', async () => {
    const member = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'events:read'] });
    const agentAdmin = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'events:read', 'agents:admin'] });
    expectProblem(await t.request('GET', exportUrl('usage'), { token: member.token, headers: { accept: 'text/csv' } }), 403, 'forbidden_scope');
    expectProblem(await t.request('GET', exportUrl('usage'), { token: agentAdmin.token, headers: { accept: 'text/csv' } }), 403, 'human_required');
  });

  it('writes a file from the CLI, the same rows as the API', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-export-'));
    try {
      const file = join(dir, 'usage.csv');
      const env = { BATON_URL: base, BATON_TOKEN: t.adminToken };
      const done = await runBaton(['export', 'usage', '--from', FROM, '--to', TO, '--format', 'csv', '--output', file], env);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stderr).toContain(`2 usage rows from ${FROM} up to ${TO} written to ${file}`);
      expect(await readFile(file, 'utf8')).toBe((await download('usage', 'text/csv')).body);
      const events = await runBaton(['export', 'events', '--from', EVENTS_FROM, '--to', EVENTS_TO, '--progress'], env);
      expect(events.code, events.stderr).toBe(0);
      expect(events.stdout.trimEnd().split('\n')).toHaveLength(SEEDED + 1);
      // Progress as it goes (--progress, as stderr is no terminal here), then the total.
      expect(events.stderr).toMatch(/^\d+ rows written\n/);
      expect(events.stderr).toContain(`${SEEDED + 1} events rows from ${EVENTS_FROM} up to ${EVENTS_TO} written to stdout.`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
