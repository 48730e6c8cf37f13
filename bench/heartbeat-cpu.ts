/**
 * `N=1200 [C=4] node bench/heartbeat-cpu.ts` — CPU per heartbeat, apart from the fleet's noise: Baton
 * in this process (Fastify's inject, so no HTTP parsing), on a fresh PostgreSQL database, 50 leases
 * heartbeated C at a time (four unless given; one in ten with a note). Heartbeats sent together
 * share transactions (src/service/write-groups.ts), so C sets how large the groups can be. Prints the server's CPU (process.cpuUsage)
 * and its backends' (/proc, bench/cpu.ts) per heartbeat. A measuring aid, not in `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { ADMIN_URL } from './databases.ts';
import { cpuSeconds } from './cpu.ts';

const name = `baton_hbp_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const token = generateToken();
try {
  const server = await createServer(loadConfig({ DATABASE_URL: url.toString(), BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: '4', BATON_SWEEP_INTERVAL_MS: '0', BATON_RATE_LIMIT: '1000000000/60s', LOG_LEVEL: 'warn' }));
  const inject = (path: string, body: unknown) => server.app.inject({ method: 'POST', url: `/api/v1${path}`, headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomBytes(8).toString('hex'), 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const leases: string[] = [];
  for (let i = 0; i < 50; i++) {
    await inject('/tasks', { title: `t${i}` });
    const c = (await inject('/tasks/claim', { ttl_s: 600 })).json<{ lease?: { id: string }; claims?: { lease: { id: string } }[] }>();
    const lease = c.lease ?? c.claims?.[0]?.lease;
    if (!lease) throw new Error('no lease granted');
    leases.push(lease.id);
  }
  const n = Number(process.env.N ?? 3000);
  const pids = (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name])).rows.map((r) => r.pid);
  const db0 = await cpuSeconds(pids);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const together = Number(process.env.C ?? 4);
  for (let i = 0; i < n; i += together) {
    await Promise.all(Array.from({ length: together }, (_, k) => k).map((k) => inject(`/leases/${leases[(i + k) % leases.length]}/heartbeat`, (i + k) % 10 === 0 ? { note: 'progress' } : {}).then((r) => { if (r.statusCode !== 200) throw new Error(r.body); })));
  }
  const cpu = process.cpuUsage(cpu0);
  const after = (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name])).rows.map((r) => r.pid).filter((p) => p !== (admin as unknown as { processID: number }).processID);
  const db1 = await cpuSeconds(after);
  const dbS = [...(db1?.entries() ?? [])].reduce((sum, [pid, s]) => sum + s - (db0?.get(pid) ?? 0), 0);
  console.log(`${n} heartbeats in ${((performance.now() - t0) / 1000).toFixed(1)} s; server CPU ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms, DB CPU ${((dbS * 1000) / n).toFixed(3)} ms per heartbeat (${pids.length} backends)`);
  await server.close();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
