import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** PostgreSQL's autovacuum defaults: a table is analyzed once more than 50 rows plus a tenth of its rows changed since its last analysis. */
const ANALYZE_THRESHOLD = 50;
const ANALYZE_SCALE_FACTOR = 0.1;

/**
 * Analyzes the tables that changed enough since their last analysis, as PostgreSQL's autovacuum
 * does by itself: ANALYZE samples at most 30,000 rows of a table (about 0.3 s for every table at
 * 10,000 tasks on PGlite). PGlite runs no autovacuum, so without this its planner never has
 * statistics: it guessed that `deleted_at IS NULL` and `archived_at IS NULL` each keep one task in
 * 200, took a list's tasks for a handful, and a search of 10,000 tasks rescanned its matches once
 * per task (32 s instead of 20 ms). Returns the tables it analyzed.
 */
export async function analyzeChangedTables(db: Kysely<DB>): Promise<{ analyzed: string[] }> {
  // A backend reports its row counts at most once a second, when it goes idle: ask it to report
  // before the count is read, or the last second's writes wait for the next pass.
  await sql`SELECT pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ schemaname: string; relname: string }>`
    SELECT schemaname, relname FROM pg_stat_user_tables
    WHERE n_mod_since_analyze > ${ANALYZE_THRESHOLD}::float8 + ${ANALYZE_SCALE_FACTOR}::float8 * n_live_tup
    ORDER BY relname`.execute(db);
  for (const { schemaname, relname } of rows) await sql`ANALYZE ${sql.id(schemaname, relname)}`.execute(db);
  return { analyzed: rows.map((row) => row.relname) };
}
