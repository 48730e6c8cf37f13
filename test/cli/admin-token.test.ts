import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, freshDatabase } from '../harness.ts';
import { databaseUrl } from '../postgres-url.ts';
import { runBaton } from './run-baton.ts';

/*
 * `baton admin-token` mints a token in the database a server already uses. Pointed anywhere else
 * (a mistyped data directory, an empty or never-started database) it refuses with one line naming
 * where it looked, and leaves that place as it was: a token minted there no server would accept.
 */

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-admin-token-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** Runs `baton admin-token` and returns its one line of refusal, after checking it printed no token and exited 1. */
async function refusal(env: Record<string, string>): Promise<string> {
  const outcome = await runBaton(['admin-token'], env);
  expect(outcome.stdout).toBe('');
  expect(outcome.code, outcome.stderr).toBe(1);
  const lines = outcome.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] ?? '';
}

describe.skipIf(engine !== 'pglite')('baton admin-token on the embedded database', () => {
  it('refuses a data directory that does not exist, naming it, and does not create it', { timeout: 120_000 }, async () => {
    const dir = join(scratch, 'no-such-dir');
    const line = await refusal({ BATON_DATA_DIR: dir });
    expect(line).toContain(`There is no database in ${dir} (BATON_DATA_DIR): no such directory`);
    expect(line).toContain('Set BATON_DATA_DIR as the server has it');
    expect(await readdir(scratch)).not.toContain('no-such-dir');
  });

  it('refuses an empty directory and leaves it empty', { timeout: 120_000 }, async () => {
    const dir = join(scratch, 'empty');
    await mkdir(dir);
    expect(await refusal({ BATON_DATA_DIR: dir })).toContain(`There is no database in ${dir} (BATON_DATA_DIR);`);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a migrated database no server has started on (no principals)', { timeout: 120_000 }, async () => {
    const dir = join(scratch, 'migrated');
    const restored = await runBaton(['restore', inject('pgliteDump')], { BATON_DATA_DIR: dir });
    expect(restored.code, restored.stderr).toBe(0);
    expect(await refusal({ BATON_DATA_DIR: dir })).toContain(`${dir} (BATON_DATA_DIR) has no principals: no Baton server has started on it`);
  });
});

describe.skipIf(engine !== 'postgres')('baton admin-token on PostgreSQL', () => {
  it('refuses an empty database, naming it without its password, and creates no table in it', { timeout: 120_000 }, async () => {
    const serverUrl = process.env.BATON_TEST_DATABASE_URL ?? '';
    const name = `${inject('postgresRunId')}_empty`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    const url = new URL(databaseUrl(serverUrl, name));
    url.password = 'secret-password';
    const line = await refusal({ DATABASE_URL: url.toString() });
    url.password = '***';
    expect(line).toContain(`the PostgreSQL database ${url.toString()} (DATABASE_URL) holds no Baton database (no baton_migrations table)`);
    expect(line).not.toContain('secret-password');

    const empty = new pg.Client({ connectionString: databaseUrl(serverUrl, name) });
    await empty.connect();
    try {
      const { rows } = await empty.query<{ n: string }>(`SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'`);
      expect(rows[0]?.n).toBe('0');
    } finally {
      await empty.end();
    }
  });

  it('refuses a migrated database no server has started on (no principals)', { timeout: 120_000 }, async () => {
    const { database, url } = await freshDatabase();
    await database.close();
    expect(await refusal({ DATABASE_URL: url ?? '' })).toMatch(/ \(DATABASE_URL\) has no principals: no Baton server has started on it/);
  });
});
