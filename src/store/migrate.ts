import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/**
 * Applies every migration in `migrations/` not yet applied, each in its own transaction, in
 * file-name order. Safe from several instances at once: each step takes an advisory lock and
 * re-checks, so a concurrent migrator waits and then skips. Returns the names that became applied
 * while this call ran (by it or by a concurrent migrator).
 */
export async function migrate(database: Database): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  await database.runScript(`
    BEGIN;
    SELECT pg_advisory_xact_lock(2, 1);
    CREATE TABLE IF NOT EXISTS baton_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
    COMMIT;`);
  const before = await appliedNames(database);
  for (const file of files) {
    const name = file.replace(/\.sql$/, '');
    if (before.has(name)) continue;
    const sql = await readFile(MIGRATIONS_DIR + file, 'utf8');
    await database.runScript(`
      BEGIN;
      SELECT pg_advisory_xact_lock(2, 1);
      DO $baton_migrate$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM baton_migrations WHERE name = ${literal(name)}) THEN
          EXECUTE ${literal(sql)};
          INSERT INTO baton_migrations (name) VALUES (${literal(name)});
        END IF;
      END $baton_migrate$;
      COMMIT;`);
  }
  const after = await appliedNames(database);
  return [...after].filter((name) => !before.has(name)).sort();
}

async function appliedNames(database: Database): Promise<Set<string>> {
  const rows = await database.runScript('SELECT name FROM baton_migrations');
  return new Set(rows.map((row) => String(row.name)));
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
