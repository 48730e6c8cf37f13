import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { StartupError } from '../startup-error.ts';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

interface Migration {
  readonly name: string;
  readonly sql: string;
  /** sha256 of the file, hex: an applied migration must never change. */
  readonly checksum: string;
}

/**
 * Applies every migration in `migrations/` not yet applied, each in its own transaction, in
 * file-name order, and records each one's checksum. Safe from several instances at once: each
 * step takes an advisory lock and re-checks, so a concurrent migrator waits and then skips.
 * Returns the names that became applied while this call ran (by it or by a concurrent migrator).
 *
 * Refuses (a `StartupError`, before applying anything) when an applied file has changed since, or
 * when the database has applied migrations this code does not have (a newer version of Baton ran
 * against it). Migrations recorded before checksums were kept get theirs filled in.
 */
export async function migrate(database: Database): Promise<string[]> {
  const migrations = await readMigrations();
  await database.runScript(`
    BEGIN;
    SELECT pg_advisory_xact_lock(2, 1);
    CREATE TABLE IF NOT EXISTS baton_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
    ALTER TABLE baton_migrations ADD COLUMN IF NOT EXISTS checksum text;
    COMMIT;`);
  const before = await applied(database);
  check(migrations, before);
  const unrecorded = migrations.filter((m) => before.has(m.name) && before.get(m.name) === null);
  if (unrecorded.length > 0) {
    // Only where still empty: a concurrent starter may have filled it in meanwhile.
    await database.runScript(
      unrecorded.map((m) => `UPDATE baton_migrations SET checksum = ${literal(m.checksum)} WHERE name = ${literal(m.name)} AND checksum IS NULL;`).join('\n'),
    );
  }
  for (const { name, sql, checksum } of migrations) {
    if (before.has(name)) continue;
    await database.runScript(`
      BEGIN;
      SELECT pg_advisory_xact_lock(2, 1);
      DO $baton_migrate$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM baton_migrations WHERE name = ${literal(name)}) THEN
          EXECUTE ${literal(sql)};
          INSERT INTO baton_migrations (name, checksum) VALUES (${literal(name)}, ${literal(checksum)});
        END IF;
      END $baton_migrate$;
      COMMIT;`);
  }
  const after = await applied(database);
  check(migrations, after);
  return [...after.keys()].filter((name) => !before.has(name)).sort();
}

/** Whether `database` holds Baton's schema, i.e. Baton has migrated it (reads only; creates nothing). */
export async function isMigrated(database: Database): Promise<boolean> {
  const [row] = await database.runScript(`SELECT to_regclass('baton_migrations') IS NOT NULL AS migrated`);
  return row?.migrated === true;
}

async function readMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(MIGRATIONS_DIR + file, 'utf8');
      return { name: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** Applied migration names with their recorded checksums (null: applied before checksums were kept). */
async function applied(database: Database): Promise<Map<string, string | null>> {
  const rows = await database.runScript('SELECT name, checksum FROM baton_migrations');
  return new Map(rows.map((row) => [String(row.name), typeof row.checksum === 'string' ? row.checksum : null]));
}

/** Throws a `StartupError` when the database's migrations are not a prefix of this code's, unchanged. */
function check(migrations: readonly Migration[], recorded: ReadonlyMap<string, string | null>): void {
  const known = new Map(migrations.map((m) => [m.name, m.checksum]));
  const unknown = [...recorded.keys()].filter((name) => !known.has(name)).sort();
  if (unknown.length > 0) {
    throw new StartupError(
      `The database has migrations this version of Baton does not know (${unknown.join(', ')}): a newer version migrated it. Run that version or a newer one; do not run an older one against this database.`,
    );
  }
  const changed = migrations.filter((m) => {
    const checksum = recorded.get(m.name);
    return checksum != null && checksum !== m.checksum;
  });
  if (changed.length > 0) {
    throw new StartupError(
      `Applied migrations were changed since (${changed.map((m) => `migrations/${m.name}.sql`).join(', ')}): their checksums differ from the ones recorded in baton_migrations. Restore the files as applied and put the change in a new migration.`,
    );
  }
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
