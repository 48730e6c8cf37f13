/**
 * Raw-SQL event-append throughput at 1, 8 and 32 concurrent writers, and how many of them wait on
 * an advisory lock meanwhile. Each writer loops `BEGIN; <the store's event append>; COMMIT` on its
 * own connection to a fresh PostgreSQL database, for BENCH_SECONDS (default 3) per point; a sampler
 * counts backends whose wait event is `advisory` every 20 ms. No HTTP, no Baton process.
 *
 *   node bench/event-writes.ts            # BENCH_DATABASE_URL picks the server
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { APPENDING, appendParameters } from '../src/store/events.ts';
import { generateToken } from '../src/tokens.ts';
import { freshDatabase } from './databases.ts';
import { Cleanup } from './processes.ts';

const WRITERS = [1, 8, 32] as const;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const APPEND = `WITH ${APPENDING} SELECT 1`;

function oneEvent(writer: number) {
  return {
    id: `evt_${randomUUID()}`,
    type: 'task.updated',
    subject: `task_${writer}`,
    actor_id: 'bench',
    actor_kind: 'system',
    token_id: null,
    machine: null,
    idempotency_key: null,
    data: { writer },
    created_at: new Date(),
  };
}

async function measure(url: string, writers: number) {
  const pool = new pg.Pool({ connectionString: url, max: writers + 1 });
  const clients = await Promise.all(Array.from({ length: writers }, () => pool.connect()));
  const sampler = await pool.connect();
  const deadline = Date.now() + SECONDS * 1000;
  let commits = 0;
  let samples = 0;
  let waiting = 0;
  const sampling = (async () => {
    while (Date.now() < deadline) {
      const { rows } = await sampler.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
      );
      samples++;
      waiting += Number(rows[0]?.n ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  await Promise.all(
    clients.map(async (client, writer) => {
      while (Date.now() < deadline) {
        await client.query('BEGIN');
        await client.query(APPEND, appendParameters([oneEvent(writer)]));
        await client.query('COMMIT');
        commits++;
      }
    }),
  );
  await sampling;
  for (const client of [...clients, sampler]) client.release();
  await pool.end();
  return { writers, perSecond: Math.round(commits / SECONDS), meanAdvisoryWaiters: samples ? waiting / samples : 0 };
}

const cleanup = new Cleanup();
cleanup.runOnSignals();
try {
  const location = await freshDatabase('postgres', `bench_event_writes_${process.pid}`, generateToken(), cleanup);
  console.log(`event appends, ${SECONDS} s per point`);
  console.log('writers  commits/s  mean backends waiting on an advisory lock');
  for (const writers of WRITERS) {
    const r = await measure(location.url, writers);
    console.log(`${String(r.writers).padStart(7)}  ${String(r.perSecond).padStart(9)}  ${r.meanAdvisoryWaiters.toFixed(2)}`);
  }
} finally {
  await cleanup.run();
}
