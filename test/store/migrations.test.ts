/**
 * The migration runner protects the data: it refuses to start on a database whose applied
 * migrations were edited since, or on which a newer release applied a contract migration; it starts,
 * with one warning, on a newer release's expand migrations (a rollback restart, migrations/README.md);
 * and the committed schema dump is what the migrations make.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StartupError } from '../../src/startup-error.ts';
import type { Database } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import { engine, freshDatabase, startTestServer } from '../harness.ts';
import { describeSchema, REGENERATE, SCHEMA_FILE } from './schema-dump.ts';

let database: Database;
let url: string | undefined;

beforeEach(async () => {
  ({ database, url } = await freshDatabase());
});

afterEach(async () => {
  await database.close();
});

async function checksums(): Promise<Map<string, unknown>> {
  const rows = await database.runScript('SELECT name, checksum FROM baton_migrations ORDER BY name');
  return new Map(rows.map((row) => [String(row.name), row.checksum]));
}

it('records a sha256 per applied migration, and fills in the ones applied before checksums were kept', async () => {
  const recorded = await checksums();
  expect(recorded.size).toBeGreaterThan(0);
  for (const checksum of recorded.values()) expect(checksum).toMatch(/^[0-9a-f]{64}$/);

  await database.runScript('UPDATE baton_migrations SET checksum = NULL');
  expect(await migrate(database)).toEqual([]);
  expect(await checksums()).toEqual(recorded);
});

it('refuses to start when an applied migration changed since, naming the file', async () => {
  await database.runScript("UPDATE baton_migrations SET checksum = repeat('0', 64) WHERE name = '0002_leases'");
  const refusal = startTestServer({}, { database });
  await expect(refusal).rejects.toBeInstanceOf(StartupError);
  await expect(refusal).rejects.toThrow(/^Applied migrations were changed since \(migrations\/0002_leases\.sql\)[^\n]*new migration\.$/);
});

/** This code's migrations plus `extra` (file name → SQL): the migrations directory of a newer release. */
async function newerRelease(extra: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-migrations-'));
  await cp(fileURLToPath(new URL('../../migrations/', import.meta.url)), dir, { recursive: true });
  for (const [file, sql] of Object.entries(extra)) await writeFile(join(dir, file), sql);
  return dir;
}

function warnings() {
  const lines: string[] = [];
  return { lines, log: { warn: (line: string) => void lines.push(line) } };
}

it('starts, with one warning line, after a newer release applied expand migrations, and serves on them (a rollback restart)', async () => {
  const dir = await newerRelease({ '9998_newer_expand.sql': '-- A newer release adds a column with a default.\nALTER TABLE tasks ADD COLUMN newer_note text;\n' });
  try {
    expect(await migrate(database, { dir })).toEqual(['9998_newer_expand']);
    const rows = await database.runScript("SELECT contract FROM baton_migrations WHERE name = '9998_newer_expand'");
    expect(rows).toEqual([{ contract: false }]);
  } finally {
    await rm(dir, { recursive: true });
  }
  const { lines, log } = warnings();
  expect(await migrate(database, { log })).toEqual([]);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^The database has expand migrations of a newer Baton release \(9998_newer_expand\); this older release runs on them/);
  // The older code serves reads and writes on it.
  const server = await startTestServer({}, { database });
  try {
    const created = await server.request('POST', '/api/v1/tasks', { body: { title: 'after a rollback' } });
    expect(created.status).toBe(201);
    expect((await server.request('GET', `/api/v1/tasks/${created.json<{ id: string }>().id}`)).status).toBe(200);
  } finally {
    // Closing the server closes its database; afterEach closes a fresh one instead.
    await server.close();
    ({ database, url } = await freshDatabase());
  }
});

it.runIf(engine === 'postgres')('applies a migration again when the database breaks it off to end a deadlock with a serving instance (a rolling deploy)', async () => {
  // The migration locks tasks, then events; a serving instance's transaction holds events and then
  // wants tasks. The migration waits first, so PostgreSQL's deadlock check picks it to break off.
  const dir = await newerRelease({ '9997_two_tables.sql': 'LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE;\nLOCK TABLE events IN ACCESS EXCLUSIVE MODE;\n' });
  const serving = new pg.Client({ connectionString: url });
  await serving.connect();
  try {
    await serving.query('BEGIN');
    await serving.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    const migrating = migrate(database, { dir });
    // Until the migrator waits on events (it then holds tasks).
    for (;;) {
      const { rows } = await serving.query<{ waiting: boolean }>('SELECT count(*) > 0 AS waiting FROM pg_locks WHERE NOT granted');
      if (rows[0]?.waiting) break;
      await sleep(20);
    }
    await serving.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
    await serving.query('COMMIT');
    expect(await migrating).toEqual(['9997_two_tables']);
  } finally {
    await serving.end();
    await rm(dir, { recursive: true });
  }
});

it('refuses to start when a newer release applied a contract migration, naming it, and applies nothing', async () => {
  const dir = await newerRelease({
    '9998_newer_expand.sql': 'ALTER TABLE tasks ADD COLUMN newer_note text;\n',
    '9999_newer_contract.sql': '-- Drops what the release before the newer one stopped using.\n-- baton:contract\nALTER TABLE tasks DROP COLUMN newer_note;\n',
  });
  try {
    expect(await migrate(database, { dir })).toEqual(['9998_newer_expand', '9999_newer_contract']);
  } finally {
    await rm(dir, { recursive: true });
  }
  const rows = await database.runScript("SELECT name, contract FROM baton_migrations WHERE name LIKE '999%' ORDER BY name");
  expect(rows).toEqual([{ name: '9998_newer_expand', contract: false }, { name: '9999_newer_contract', contract: true }]);
  const before = await checksums();
  const refusal = startTestServer({}, { database });
  await expect(refusal).rejects.toBeInstanceOf(StartupError);
  await expect(refusal).rejects.toThrow(/^The database has contract migrations this version of Baton does not know \(9999_newer_contract\)[^\n]*$/);
  expect(await checksums()).toEqual(before);
});

it('a contract mark counts only in the header comment', async () => {
  const dir = await newerRelease({ '9999_newer_expand.sql': '-- An expand step.\nCREATE TABLE newer (id int);\n-- baton:contract (in the body: not a mark)\n' });
  try {
    await migrate(database, { dir });
  } finally {
    await rm(dir, { recursive: true });
  }
  expect(await database.runScript("SELECT contract FROM baton_migrations WHERE name = '9999_newer_expand'")).toEqual([{ contract: false }]);
});

it('migrations/schema.sql is what the migrations make', async () => {
  const committed = await readFile(SCHEMA_FILE, 'utf8');
  expect(await describeSchema(database), `migrations/schema.sql differs from the migrated schema; regenerate it with: ${REGENERATE}`).toBe(committed);
});
