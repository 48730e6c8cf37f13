import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTransactionConflict } from '../errors.ts';
import { StartupError } from '../startup-error.ts';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** The header line that marks a contract migration (migrations/README.md): one a release before it may not survive. */
const CONTRACT_MARK = /^--\s*baton:contract\s*$/m;

/**
 * How often a migration step is tried when the database breaks it off, to end a deadlock with the
 * transactions of instances serving meanwhile (a rolling deploy) or because it waited for their
 * locks longer than the lock timeout: the step rolled back whole, so trying it again is safe.
 * Waits grow from 100 ms to 6.4 s, about 13 s in all besides the lock waits.
 */
const MIGRATION_ATTEMPTS = 8;

/** SQLSTATE of a statement that waited longer than `lock_timeout` for a lock. */
const LOCK_TIMEOUT = '55P03';

interface Migration {
  readonly name: string;
  readonly sql: string;
  /** sha256 of the file, hex: an applied migration must never change. */
  readonly checksum: string;
  /** Whether it removes or narrows what an older release uses (`-- baton:contract`), so that release may not start after it. */
  readonly contract: boolean;
}

export interface MigrateOptions {
  /** Told, in one line, when a newer release applied expand migrations this code does not have. */
  readonly log?: Pick<Logger, 'warn'> | undefined;
  /** Where the migration files are (tests add a newer release's); migrations/ by default. */
  readonly dir?: string | undefined;
}

interface Applied {
  /** Null: applied before checksums were kept. */
  readonly checksum: string | null;
  readonly contract: boolean;
}

/**
 * Applies every migration in `migrations/` not yet applied, each in its own transaction, in
 * file-name order, and records each one's checksum. Safe from several instances at once: each
 * step takes an advisory lock and re-checks, so a concurrent migrator waits and then skips.
 * Returns the names that became applied while this call ran (by it or by a concurrent migrator).
 *
 * Expand/contract (migrations/README.md): a newer release's migrations that this code does not have
 * are fine when they only expand the schema; it starts on them and says so in one warning line. It
 * refuses (a `StartupError`, before applying anything) when one of them is a contract migration, or
 * when an applied file has changed since. Migrations recorded before checksums were kept get theirs
 * filled in.
 */
export async function migrate(database: Database, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = await readMigrations(options.dir ?? MIGRATIONS_DIR);
  // `contract` is added here, not by a migration, so it exists before any migration is recorded;
  // older releases insert without it and get false, right for every migration they know.
  await database.runScript(`
    BEGIN;
    SELECT pg_advisory_xact_lock(2, 1);
    CREATE TABLE IF NOT EXISTS baton_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
    ALTER TABLE baton_migrations ADD COLUMN IF NOT EXISTS checksum text;
    ALTER TABLE baton_migrations ADD COLUMN IF NOT EXISTS contract boolean NOT NULL DEFAULT false;
    COMMIT;`);
  const before = await applied(database);
  const newer = check(migrations, before);
  if (newer.length > 0) {
    options.log?.warn(
      `The database has expand migrations of a newer Baton release (${newer.join(', ')}); this older release runs on them, but upgrade it to that release soon (docs/operations.md, "Upgrades and rollbacks").`,
    );
  }
  const unrecorded = migrations.filter((m) => before.get(m.name)?.checksum === null);
  if (unrecorded.length > 0) {
    // Only where still empty: a concurrent starter may have filled it in meanwhile.
    await database.runScript(
      unrecorded.map((m) => `UPDATE baton_migrations SET checksum = ${literal(m.checksum)} WHERE name = ${literal(m.name)} AND checksum IS NULL;`).join('\n'),
    );
  }
  for (const { name, sql, checksum, contract } of migrations) {
    if (before.has(name)) continue;
    await retryingConflicts(name, () => database.runScript(`
      BEGIN;
      -- A migration may take longer than any request (an index on a large table); lock waits stay bounded.
      SET LOCAL statement_timeout = 0;
      SELECT pg_advisory_xact_lock(2, 1);
      DO $baton_migrate$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM baton_migrations WHERE name = ${literal(name)}) THEN
          -- Every write a serving instance makes starts by inserting its idempotency key: holding
          -- this first, the migration waits for the writes under way and new ones wait for it, so
          -- none is half way through its tables while the migration takes them (a deadlock).
          IF to_regclass('idempotency_keys') IS NOT NULL THEN
            LOCK TABLE idempotency_keys IN SHARE MODE;
          END IF;
          EXECUTE ${literal(sql)};
          INSERT INTO baton_migrations (name, checksum, contract) VALUES (${literal(name)}, ${literal(checksum)}, ${contract});
        END IF;
      END $baton_migrate$;
      COMMIT;`));
  }
  const after = await applied(database);
  check(migrations, after);
  return [...after.keys()].filter((name) => !before.has(name)).sort();
}

/**
 * Runs migration `name` again (after a growing wait) while the database breaks it off for a
 * deadlock or a lock timeout. The last refusal names the migration and the tries it took.
 */
async function retryingConflicts<T>(name: string, step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      const lockTimeout = (error as { code?: unknown }).code === LOCK_TIMEOUT;
      if (!(isTransactionConflict(error) || lockTimeout)) throw error;
      if (attempt === MIGRATION_ATTEMPTS) {
        if (error instanceof Error) error.message = `${error.message} (migration ${name}, ${attempt} tries)`;
        throw error;
      }
      await sleep(100 * 2 ** (attempt - 1));
    }
  }
}

/** Whether `database` holds Baton's schema, i.e. Baton has migrated it (reads only; creates nothing). */
export async function isMigrated(database: Database): Promise<boolean> {
  const [row] = await database.runScript(`SELECT to_regclass('baton_migrations') IS NOT NULL AS migrated`);
  return row?.migrated === true;
}

async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(join(dir, file), 'utf8');
      return { name: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex'), contract: isContract(sql) };
    }),
  );
}

/** Whether the file's leading comment block holds the `-- baton:contract` line. */
function isContract(sql: string): boolean {
  const lines = sql.split('\n');
  const end = lines.findIndex((line) => !line.startsWith('--') && line.trim() !== '');
  return CONTRACT_MARK.test(lines.slice(0, end === -1 ? undefined : end).join('\n'));
}

/** Applied migrations by name. */
async function applied(database: Database): Promise<Map<string, Applied>> {
  const rows = await database.runScript('SELECT name, checksum, contract FROM baton_migrations');
  return new Map(rows.map((row) => [String(row.name), { checksum: typeof row.checksum === 'string' ? row.checksum : null, contract: row.contract === true }]));
}

/**
 * Throws a `StartupError` when an applied migration this code has changed since, or when a newer
 * release applied a contract migration this code does not know. Returns the newer release's expand
 * migrations (applied, unknown here), which it may run on.
 */
function check(migrations: readonly Migration[], recorded: ReadonlyMap<string, Applied>): string[] {
  const known = new Set(migrations.map((m) => m.name));
  const unknown = [...recorded].filter(([name]) => !known.has(name)).sort(([a], [b]) => (a < b ? -1 : 1));
  const contract = unknown.filter(([, m]) => m.contract).map(([name]) => name);
  if (contract.length > 0) {
    throw new StartupError(
      `The database has contract migrations this version of Baton does not know (${contract.join(', ')}): a newer release removed what this one needs. Run that release or a newer one; an older one cannot run on this database.`,
    );
  }
  const changed = migrations.filter((m) => {
    const checksum = recorded.get(m.name)?.checksum;
    return checksum != null && checksum !== m.checksum;
  });
  if (changed.length > 0) {
    throw new StartupError(
      `Applied migrations were changed since (${changed.map((m) => `migrations/${m.name}.sql`).join(', ')}): their checksums differ from the ones recorded in baton_migrations. Restore the files as applied and put the change in a new migration.`,
    );
  }
  return unknown.map(([name]) => name);
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
