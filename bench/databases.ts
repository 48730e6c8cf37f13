import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import type { Cleanup } from './processes.ts';

export const ENGINES = ['pglite', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

/** Baton's default BATON_DB_POOL_SIZE; the baseline's pg pool is the same size. */
export const DB_POOL_SIZE = 10;

/**
 * The per-token request budget both servers count against (BATON_RATE_LIMIT). Baton's default,
 * 600/60s, would answer 429 within the first second; the counting is measured, not the limit.
 */
export const RATE_LIMIT = '1000000000/60s';

/** Where one server's database lives: a PostgreSQL database or a PGlite data directory. */
export type DatabaseLocation = { engine: 'postgres'; url: string; name: string } | { engine: 'pglite'; dataDir: string };

/** The PostgreSQL server to create scratch databases on; any database on it works for the admin connection. */
export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A fresh database (or data directory) named after `name`, migrated and holding the bootstrap admin
 * whose token is `token` — made by Baton's own start-up code, so Baton and the baseline begin from
 * identical schemas. Removal is registered on `cleanup` before creation. `adminUrl`: another
 * PostgreSQL server than BENCH_DATABASE_URL's (bench/fleet.ts's replicated pair).
 */
export async function freshDatabase<E extends Engine>(engine: E, name: string, token: string, cleanup: Cleanup, adminUrl = ADMIN_URL): Promise<Extract<DatabaseLocation, { engine: E }>> {
  const location: DatabaseLocation = engine === 'postgres' ? await createDatabase(name, cleanup, adminUrl) : await createDataDir(name, cleanup);
  const env = location.engine === 'postgres' ? { DATABASE_URL: location.url } : { BATON_DATA_DIR: location.dataDir };
  const server = await createServer(loadConfig({ ...env, BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: '2' }));
  await server.close();
  return location as Extract<DatabaseLocation, { engine: E }>;
}

/** An empty PostgreSQL database named `name` (for the peer queues, which migrate their own); dropped by `cleanup`. */
export async function emptyDatabase(name: string, cleanup: Cleanup): Promise<Extract<DatabaseLocation, { engine: 'postgres' }>> {
  return (await createDatabase(name, cleanup)) as Extract<DatabaseLocation, { engine: 'postgres' }>;
}

async function createDatabase(name: string, cleanup: Cleanup, adminUrl = ADMIN_URL): Promise<DatabaseLocation> {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  cleanup.add(() =>
    withAdmin(async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }, adminUrl),
  );
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`), adminUrl);
  return { engine: 'postgres', url: url.toString(), name };
}

async function createDataDir(name: string, cleanup: Cleanup): Promise<DatabaseLocation> {
  const dataDir = await mkdtemp(join(tmpdir(), `${name}-`));
  cleanup.add(() => rm(dataDir, { recursive: true, force: true }));
  return { engine: 'pglite', dataDir };
}

/** The PostgreSQL backends serving `database` now (none for PGlite, which runs inside its server), asked of the server `adminUrl` names. */
export async function backendPids(database: DatabaseLocation, adminUrl = ADMIN_URL): Promise<number[]> {
  if (database.engine === 'pglite') return [];
  const { name } = database;
  return withAdmin(async (admin) => (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name])).rows.map((row) => row.pid), adminUrl);
}

/** `SHOW server_version` of the PostgreSQL server, or why it is unknown. */
export async function postgresVersion(): Promise<string> {
  return withAdmin(async (admin) => (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown').catch(
    (error: unknown) => `unreachable (${(error as Error).message})`,
  );
}

async function withAdmin<T>(run: (admin: pg.Client) => Promise<T>, adminUrl = ADMIN_URL): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}
