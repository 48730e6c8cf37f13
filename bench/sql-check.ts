import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { BASELINE_STATEMENTS } from './baseline-statements.ts';
import { stockPool } from './pg-pools.ts';
import { APPEND_EVENTS, type Overhead, rawClaim, rawComplete, rawRelease, rawReleaseMany } from './claims-statements.ts';
import { RATE_LIMIT } from './databases.ts';
import type { Scenario } from './load.ts';

/** Sent by Baton on every authenticated request; the baseline leaves it out on purpose (see RESULTS.md). */
const TOKEN_TOUCH = /^update "tokens" set "last_used_at"/;

export interface SqlCheck {
  /** True when, for every scenario checked, the baseline sends Baton's statements in Baton's order. */
  matches: boolean;
  /** What to print and record: "matches", or each scenario's two lists where they differ. */
  report: string;
}

/**
 * Runs Baton in this process on the PostgreSQL database at `url` (migrated, holding `token`'s
 * admin), sends one request per scenario and compares the SQL text it sent — recorded by wrapping
 * pg's `Client#query` — with the baseline's, so a change in `src/store` cannot silently leave the
 * baseline measuring other work.
 */
export async function checkBaselineSql(url: string, token: string, scenarios: readonly Scenario[]): Promise<SqlCheck> {
  const sent = await captureBatonSql(url, token);
  const differences = scenarios.flatMap((name) => {
    const baton = sent[name].filter((text) => !TOKEN_TOUCH.test(text));
    const baseline = BASELINE_STATEMENTS[name].map(normalise);
    return baton.join('\n') === baseline.join('\n') ? [] : [`  ${name}:`, ...diffLines(baton, baseline)];
  });
  if (differences.length === 0) return { matches: true, report: `the baseline sends the SQL Baton sends (${scenarios.join(', ')})` };
  return {
    matches: false,
    report: `the baseline's SQL differs from Baton's — update bench/baseline-statements.ts and bench/baseline-server.ts:\n${differences.join('\n')}`,
  };
}

/** The statements of one request per scenario, after a first request that warms any cache up. */
async function captureBatonSql(url: string, token: string): Promise<Record<Scenario, string[]>> {
  return withBaton(url, token, async (call) => {
    // Anything cached across requests (a token's grant, say) is cached during the measured runs too.
    await call('POST', '/api/v1/tasks', { title: 'SQL check, first', labels: ['bench'] });
    const created = await call('POST', '/api/v1/tasks', { title: 'SQL check', labels: ['bench'] });
    const read = await call('GET', `/api/v1/tasks/${String(created.body.id)}`);
    const patched = await call('PATCH', `/api/v1/tasks/${String(created.body.id)}`, { title: 'SQL check, renamed' });
    return { create: created.statements, get: read.statements, patch: patched.statements };
  });
}

const CLAIM_CYCLES = ['claim', 'complete', 'release', 'claimMany', 'releaseMany'] as const;
type ClaimStep = (typeof CLAIM_CYCLES)[number];

/**
 * Baton's statements that the claims benchmark's minimal route and raw SQL leave out on purpose,
 * as the service overhead the benchmark shows: the token lookup with its rate count, the token
 * touch, the idempotency-key claim, and the stored response (which also carries Baton's event
 * append; the raw SQL appends the same events in a statement of its own, left out of its side).
 */
const BATON_OVERHEAD = [/^WITH g AS \( SELECT t\.id AS token_id/, TOKEN_TOUCH, /^SELECT pg_try_advisory_xact_lock/, /INSERT INTO idempotency_keys/];
/** The raw SQL's own event append, matched by its whole text: a pattern went stale once when the append changed. */
const RAW_EVENT_APPEND = normalise(APPEND_EVENTS);

/**
 * Runs a claim, a holder's complete (PATCH to in_review with the epoch), a release, a claim of two and their release through Baton
 * in this process, and the same steps through bench/claims-statements.ts, on the PostgreSQL
 * database at `url` (migrated, holding `token`'s admin), and compares the statements of the work
 * itself: those SQL texts are copied by hand into the raw SQL, so a change to Baton's claim, grant
 * or lease ending must show here. Identifier quotes are ignored (Kysely quotes, the copy does not).
 */
export async function checkClaimsSql(url: string, token: string): Promise<SqlCheck> {
  const baton = await withBaton(url, token, async (call) => {
    for (let i = 0; i < 8; i++) await call('POST', '/api/v1/tasks', { title: `Claims SQL check ${i}` });
    await call('POST', '/api/v1/tasks/claim', {});
    const first = await call('POST', '/api/v1/tasks/claim', {});
    const held = (first.body as unknown as { claims: { lease: { id: string; task_id: string; epoch: number } }[] }).claims[0]?.lease;
    if (!held) throw new Error('SQL check: Baton claimed nothing');
    const completed = await call('PATCH', `/api/v1/tasks/${held.task_id}`, { status: 'in_review', lease_epoch: held.epoch });
    const second = await call('POST', '/api/v1/tasks/claim', {});
    const lease = (second.body as unknown as { claims: { lease: { id: string } }[] }).claims[0]?.lease;
    if (!lease) throw new Error('SQL check: Baton claimed nothing the second time');
    const released = await call('POST', `/api/v1/leases/${lease.id}/release`, {});
    const batch = await call('POST', '/api/v1/tasks/claim', { limit: 2 });
    const leases = (batch.body as unknown as { claims: { lease: { id: string } }[] }).claims.map((c) => c.lease.id);
    if (leases.length !== 2) throw new Error('SQL check: Baton did not claim a batch of two');
    const releasedMany = await call('POST', '/api/v1/leases/release', { ids: leases });
    return { claim: first.statements, complete: completed.statements, release: released.statements, claimMany: batch.statements, releaseMany: releasedMany.statements };
  });
  const raw = await recordRaw(url);
  const same = await recordRaw(url, token);
  const differences = CLAIM_CYCLES.flatMap((step) => {
    const ours = baton[step].filter((text) => !BATON_OVERHEAD.some((pattern) => pattern.test(text))).map(unquoted);
    const theirs = raw[step].filter((text) => text !== RAW_EVENT_APPEND).map(unquoted);
    const all = baton[step].filter((text) => !TOKEN_TOUCH.test(text)).map(unquoted);
    const sameSql = same[step].map(unquoted);
    return [
      ...(ours.join('\n') === theirs.join('\n') ? [] : [`  ${step} (raw SQL and minimal route):`, ...diffLines(ours, theirs)]),
      ...(all.join('\n') === sameSql.join('\n') ? [] : [`  ${step} (same-SQL route):`, ...diffLines(all, sameSql)]),
    ];
  });
  if (differences.length === 0) {
    return {
      matches: true,
      report: 'the raw SQL and the minimal route send the claim, complete, release, batch claim and batch release statements Baton sends, besides its overhead; the same-SQL route sends all of them',
    };
  }
  return {
    matches: false,
    report: `the claims benchmark's statements differ from Baton's — update bench/claims-statements.ts:\n${differences.join('\n')}`,
  };
}

/** The raw claim, complete and release transactions' statements; with `token`, as the same-SQL route sends them (Baton's overhead included). */
async function recordRaw(url: string, token?: string): Promise<Record<ClaimStep, string[]>> {
  return recording(async (recorded) => {
    const pool = stockPool(url, 1);
    const counters = stockPool(url, 2, { synchronousCommitOff: true });
    let keys = 0;
    const overhead = (operation: string): Overhead | undefined => (token ? { counters, token, key: `sql-check-same-${keys++}`, operation } : undefined);
    try {
      const claim = await recorded(() => rawClaim(pool, 1, overhead('tasks_claim_next')));
      const [held] = claim.value;
      if (!held) throw new Error('SQL check: the raw SQL claimed nothing');
      const complete = await recorded(() => rawComplete(pool, held, overhead('tasks_update')));
      const [again] = await rawClaim(pool, 1);
      if (!again) throw new Error('SQL check: the raw SQL claimed nothing the second time');
      const release = await recorded(() => rawRelease(pool, again.lease_id, overhead('leases_release')));
      const claimMany = await recorded(() => rawClaim(pool, 2, overhead('tasks_claim_next')));
      const batch = claimMany.value;
      if (batch.length !== 2) throw new Error('SQL check: the raw SQL did not claim a batch of two');
      const releaseMany = await recorded(() => rawReleaseMany(pool, batch.map((c) => c.lease_id), overhead('leases_release_many')));
      return { claim: claim.statements, complete: complete.statements, release: release.statements, claimMany: claimMany.statements, releaseMany: releaseMany.statements };
    } finally {
      await Promise.all([pool.end(), counters.end()]);
    }
  });
}

type Call = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: object) => Promise<{ body: Record<string, unknown>; statements: string[] }>;

/** Runs `use` against Baton in this process, each call answering with the statements it sent. */
async function withBaton<T>(url: string, token: string, use: (call: Call) => Promise<T>): Promise<T> {
  return recording(async (recorded) => {
    // No lease sweeps: their statements would land among the request's.
    const server = await createServer(
      loadConfig({ DATABASE_URL: url, BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: '2', BATON_RATE_LIMIT: RATE_LIMIT, BATON_SWEEP_INTERVAL_MS: '0', BATON_WEBHOOK_INTERVAL_MS: '0' }),
    );
    try {
      let keys = 0;
      return await use(async (method, path, body) => {
        const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json', 'idempotency-key': `sql-check-${keys++}` } : {}) };
        const { value: response, statements } = await recorded(async () => {
          const answer = await server.app.inject({ method, url: path, headers, ...(body ? { payload: JSON.stringify(body) } : {}) });
          // The token touch is not awaited by the request; let it reach the wire.
          await sleep(50);
          return answer;
        });
        if (response.statusCode >= 300) throw new Error(`SQL check: ${method} ${path} answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
        return { body: response.json<Record<string, unknown>>(), statements };
      });
    } finally {
      await server.close();
    }
  });
}

type Recorder = <T>(run: () => Promise<T>) => Promise<{ value: T; statements: string[] }>;

/** Records the SQL text every pg client sends (by wrapping `Client#query`) while `use` runs; `recorded` answers one step with its statements. */
async function recording<T>(use: (recorded: Recorder) => Promise<T>): Promise<T> {
  const client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = client.query;
  let sent: string[] = [];
  client.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text !== undefined) sent.push(normalise(text));
    return query.apply(this, args);
  };
  try {
    return await use(async (run) => {
      sent = [];
      const value = await run();
      return { value, statements: [...sent] };
    });
  } finally {
    client.query = query;
  }
}

/**
 * The two statement lists as a diff (a longest-common-subsequence walk): `=` for a statement both
 * send (shortened), `- Baton:` for one only Baton sends, `+ baseline:` for one only the baseline sends.
 */
function diffLines(baton: readonly string[], baseline: readonly string[]): string[] {
  const common = (i: number, j: number): number => lcs[i]?.[j] ?? 0;
  const lcs = baton.map(() => baseline.map(() => 0));
  lcs.push(baseline.map(() => 0));
  for (let i = baton.length - 1; i >= 0; i--) {
    for (let j = baseline.length - 1; j >= 0; j--) {
      const row = lcs[i] ?? [];
      row[j] = baton[i] === baseline[j] ? common(i + 1, j + 1) + 1 : Math.max(common(i + 1, j), common(i, j + 1));
    }
  }
  const lines: string[] = [];
  let i = 0;
  let j = 0;
  while (i < baton.length || j < baseline.length) {
    if (i < baton.length && j < baseline.length && baton[i] === baseline[j]) {
      lines.push(`    = ${(baton[i] ?? '').slice(0, 80)}…`);
      i++;
      j++;
    } else if (j >= baseline.length || (i < baton.length && common(i + 1, j) >= common(i, j + 1))) {
      lines.push(`    - Baton:    ${baton[i++] ?? ''}`);
    } else {
      lines.push(`    + baseline: ${baseline[j++] ?? ''}`);
    }
  }
  return lines;
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function unquoted(text: string): string {
  return text.replaceAll('"', '');
}
