import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { BASELINE_STATEMENTS } from './baseline-statements.ts';
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
  const client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = client.query;
  let recorded: string[] = [];
  client.query = function (this: unknown, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (text !== undefined) recorded.push(normalise(text));
    return query.apply(this, args);
  };
  // No lease sweeps: their statements would land among the request's.
  const server = await createServer(
    loadConfig({ DATABASE_URL: url, BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: '2', BATON_RATE_LIMIT: RATE_LIMIT, BATON_SWEEP_INTERVAL_MS: '0', BATON_WEBHOOK_INTERVAL_MS: '0' }),
  );
  try {
    let keys = 0;
    const call = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: object): Promise<{ id: string; statements: string[] }> => {
      recorded = [];
      const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json', 'idempotency-key': `sql-check-${keys++}` } : {}) };
      const response = await server.app.inject({ method, url: path, headers, ...(body ? { payload: JSON.stringify(body) } : {}) });
      if (response.statusCode >= 300) throw new Error(`SQL check: ${method} ${path} answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
      // The token touch is not awaited by the request; let it reach the wire.
      await sleep(50);
      return { id: (response.json<{ id: string }>()).id, statements: recorded };
    };
    // Anything cached across requests (a token's grant, say) is cached during the measured runs too.
    await call('POST', '/api/v1/tasks', { title: 'SQL check, first', labels: ['bench'] });
    const created = await call('POST', '/api/v1/tasks', { title: 'SQL check', labels: ['bench'] });
    const read = await call('GET', `/api/v1/tasks/${created.id}`);
    const patched = await call('PATCH', `/api/v1/tasks/${created.id}`, { title: 'SQL check, renamed' });
    return { create: created.statements, get: read.statements, patch: patched.statements };
  } finally {
    client.query = query;
    await server.close();
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
