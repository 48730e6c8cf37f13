/**
 * The rate count under one hot token: raw statements, no HTTP. 32 connections send the store's
 * token lookup-and-count (`findGrantAndCount`, what every authenticated request runs) for
 * BENCH_SECONDS (default 3) each way: all with one token, then each with its own token. The ratio
 * one/many is what issue 26 asks to keep >= 0.9.
 *
 *   node bench/rate-counts.ts            # BENCH_DATABASE_URL picks the server
 */
import pg from 'pg';
import { openPostgres } from '../src/store/database.ts';
import { findGrantAndCount } from '../src/store/tokens.ts';
import { generateToken, hashToken } from '../src/tokens.ts';
import { freshDatabase } from './databases.ts';
import { Cleanup } from './processes.ts';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WINDOW_S = 60;

async function measure(url: string, hashes: readonly Buffer[]): Promise<number> {
  const database = openPostgres(url, CONNECTIONS);
  const deadline = Date.now() + SECONDS * 1000;
  let counted = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, i) => {
      const hash = hashes[i % hashes.length] ?? Buffer.alloc(0);
      while (Date.now() < deadline) {
        const now = new Date();
        await findGrantAndCount(database.db, hash, { windowStart: Math.floor(now.getTime() / 1000 / WINDOW_S) * WINDOW_S, operations: 1, defaultLimit: 1_000_000 }, now);
        counted++;
      }
    }),
  );
  await database.close();
  return counted / SECONDS;
}

const cleanup = new Cleanup();
cleanup.runOnSignals();
try {
  const token = generateToken();
  const location = await freshDatabase('postgres', `bench_rate_counts_${process.pid}`, token, cleanup);
  const tokens = [token, ...Array.from({ length: CONNECTIONS - 1 }, () => generateToken())];
  const admin = new pg.Client({ connectionString: location.url });
  admin.on('error', () => undefined);
  await admin.connect();
  // Copies of the bootstrap token's row under other hashes: 32 tokens of one principal, each on a
  // machine of its own (a principal has one live token per machine, migration 0010).
  await admin.query('CREATE TEMP TABLE copied AS SELECT * FROM tokens WHERE token_hash = $1', [hashToken(token)]);
  for (const [i, other] of tokens.slice(1).entries()) {
    await admin.query(`UPDATE copied SET id = $1, token_hash = $2, machine = $3`, [`tok_bench_${i}`, hashToken(other), `bench-${i}`]);
    await admin.query('INSERT INTO tokens SELECT * FROM copied');
  }
  await admin.end();
  const one = await measure(location.url, [hashToken(token)]);
  const many = await measure(location.url, tokens.map(hashToken));
  console.log(`${CONNECTIONS} connections, ${SECONDS} s each: one token ${Math.round(one)}/s, ${CONNECTIONS} tokens ${Math.round(many)}/s, ratio ${(one / many).toFixed(2)}`);
} finally {
  await cleanup.run();
}
