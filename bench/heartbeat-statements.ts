/**
 * `node bench/heartbeat-statements.ts` — the SQL statements one heartbeat sends, read from
 * PostgreSQL's own log (log_statement = 'all' set on a scratch database). Prints them in order.
 * Needs BENCH_DATABASE_URL's server (default 127.0.0.1:5432, trust auth) and read access to its log
 * (PG_LOG, default Debian's /var/log/postgresql/postgresql-15-main.log). A measuring aid, not in `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { ADMIN_URL } from './databases.ts';

const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const name = `baton_hb_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const token = generateToken();
try {
  const server = await createServer(loadConfig({ DATABASE_URL: url.toString(), BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: '1', BATON_SWEEP_INTERVAL_MS: '0' }));
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await server.app.inject({ method: method as 'POST', url: `/api/v1${path}`, headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomBytes(8).toString('hex'), ...(body ? { 'content-type': 'application/json' } : {}) }, payload: body ? JSON.stringify(body) : undefined });
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
    return res.json<Record<string, unknown>>();
  };
  await call('POST', '/tasks', { title: 'one' });
  const claim = await call('POST', '/tasks/claim', {});
  const lease = (claim.lease ?? (claim.claims as { lease: unknown }[] | undefined)?.[0]?.lease) as { id: string };
  await call('POST', `/leases/${lease.id}/heartbeat`, {}); // warm: first-use statements (prepares) out of the way
  await admin.query(`ALTER DATABASE ${name} SET log_statement = 'all'`);
  // The pool's one connection reads the setting when it reconnects: close and reopen it by a fresh server.
  await server.close();
  const again = await createServer(loadConfig({ DATABASE_URL: url.toString(), BATON_DB_POOL_SIZE: '1', BATON_SWEEP_INTERVAL_MS: '0' }));
  const inject = (path: string, body: unknown) => again.app.inject({ method: 'POST', url: `/api/v1${path}`, headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomBytes(8).toString('hex'), 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  await inject(`/leases/${lease.id}/heartbeat`, {});
  for (const body of [{}, { note: 'halfway' }]) {
    const mark = (await readFile(LOG, 'utf8')).length;
    const res = await inject(`/leases/${lease.id}/heartbeat`, body);
    await new Promise((r) => setTimeout(r, 300));
    const text = (await readFile(LOG, 'utf8')).slice(mark);
    const entries = text.split(/\n(?=\d{4}-\d\d-\d\d )/).filter((l) => /LOG:  (statement|execute)/.test(l) && !l.includes('DETAIL:  parameters') || /LOG:  (statement|execute)/.test(l));
    console.log(`\n## heartbeat ${JSON.stringify(body)} → ${res.statusCode}: ${entries.length} statements`);
    for (const l of entries) console.log('- ' + l.replace(/^.*?LOG:  (statement|execute [^:]*): /s, '').split('\n')[0]?.slice(0, 0) + l.replace(/^.*?LOG:  (statement|execute [^:]*): /s, '').replace(/\n\d{4}-.*DETAIL:.*$/s, '').replace(/\s+/g, ' ').slice(0, 200));
  }
  await again.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
