/**
 * The baselines' PostgreSQL pools: stock pg, no Baton code. They send each parameterised statement
 * as a named prepared statement through pg's public `{ name, text, values }`, as Baton's store does
 * (src/store/database.ts), so both sides parse and plan each text once per connection.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';

/** A pg pool of `size`; `synchronousCommitOff` for the pool standing in for Baton's `Database.counters`. */
export function stockPool(url: string, size: number, options: { synchronousCommitOff?: boolean } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: size, ...(options.synchronousCommitOff ? { options: '-c synchronous_commit=off' } : {}) });
  pool.on('error', () => undefined);
  return pool;
}

/** `text` with `values` as a named prepared statement (no values: sent as it is). */
export function prepared(text: string, values: readonly unknown[] = []): pg.QueryConfig {
  if (values.length === 0) return { text };
  return { name: `bench_${createHash('sha1').update(text).digest('base64url')}`, text, values: [...values] };
}
