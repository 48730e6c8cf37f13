/**
 * The migration runner protects the data: it refuses to start on a database whose applied
 * migrations were edited since, or that a newer version of Baton migrated; and the committed
 * schema dump is what the migrations make.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { StartupError } from '../../src/startup-error.ts';
import type { Database } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';
import { freshDatabase, startTestServer } from '../harness.ts';
import { describeSchema, REGENERATE, SCHEMA_FILE } from './schema-dump.ts';

let database: Database;

beforeEach(async () => {
  ({ database } = await freshDatabase());
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

it('refuses to start when a newer version migrated the database, naming the unknown migrations, and applies nothing', async () => {
  await database.runScript("INSERT INTO baton_migrations (name, checksum) VALUES ('9999_from_a_newer_version', repeat('0', 64))");
  const before = await checksums();
  const refusal = startTestServer({}, { database });
  await expect(refusal).rejects.toBeInstanceOf(StartupError);
  await expect(refusal).rejects.toThrow(/^The database has migrations this version of Baton does not know \(9999_from_a_newer_version\)[^\n]*$/);
  expect(await checksums()).toEqual(before);
});

it('migrations/schema.sql is what the migrations make', async () => {
  const committed = await readFile(SCHEMA_FILE, 'utf8');
  expect(await describeSchema(database), `migrations/schema.sql differs from the migrated schema; regenerate it with: ${REGENERATE}`).toBe(committed);
});
