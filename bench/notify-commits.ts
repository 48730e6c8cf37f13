/**
 * `node bench/notify-commits.ts` — what `NOTIFY` costs commits: ten writers each commit 300
 * one-row transactions, with and without a `pg_notify` in them, twice each, on BENCH_DATABASE_URL's
 * server (a scratch table in its admin database). PostgreSQL takes a lock for a notifying commit and
 * holds it through the WAL flush, so notifying commits are serialised. A measuring aid, not in
 * `npm run bench` (bench/README.md, "Fleet").
 */
import pg from 'pg';
import { ADMIN_URL } from './databases.ts';

const WRITERS = 10;
const COMMITS = 300;

const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query('DROP TABLE IF EXISTS baton_bench_notify; CREATE TABLE baton_bench_notify (id bigserial PRIMARY KEY, v text)');
const listener = new pg.Client({ connectionString: ADMIN_URL });
await listener.connect();
await listener.query('LISTEN baton_bench_notify');
try {
  for (const notify of [false, true, false, true]) {
    const writers = await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        const client = new pg.Client({ connectionString: ADMIN_URL });
        await client.connect();
        return client;
      }),
    );
    const write = notify
      ? "WITH w AS (SELECT pg_notify('baton_bench_notify', '')) INSERT INTO baton_bench_notify (v) SELECT 'x' FROM w"
      : "INSERT INTO baton_bench_notify (v) VALUES ('x')";
    const started = performance.now();
    await Promise.all(
      writers.map(async (client) => {
        for (let i = 0; i < COMMITS; i++) {
          await client.query('BEGIN');
          await client.query(write);
          await client.query('COMMIT');
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    console.log(`${notify ? 'with NOTIFY   ' : 'without NOTIFY'} ${((WRITERS * COMMITS) / seconds).toFixed(0)} commits/s`);
    await Promise.all(writers.map((client) => client.end()));
  }
} finally {
  await listener.end();
  await admin.query('DROP TABLE baton_bench_notify');
  await admin.end();
}
