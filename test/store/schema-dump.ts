/**
 * The schema a fresh migration produces, as deterministic text read from the catalogue (the same
 * query on PostgreSQL and PGlite, no pg_dump needed). `migrations/schema.sql` holds it, so a schema
 * change shows in review; test/store/schema.test.ts fails when the two disagree.
 *
 * Regenerate: node test/store/schema-dump.ts
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { type Database, openPglite } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrate.ts';

export const SCHEMA_FILE = fileURLToPath(new URL('../../migrations/schema.sql', import.meta.url));
export const REGENERATE = 'node test/store/schema-dump.ts';

const HEADER = `-- The schema after every migration, read from the catalogue. Generated; do not edit.\n-- Regenerate with: ${REGENERATE}\n`;

const TABLES = `
  SELECT c.relname AS name,
         string_agg(format('  %I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                           CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                           COALESCE(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')), E',\\n' ORDER BY a.attnum) AS columns
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
  WHERE c.relkind IN ('r', 'p')
  GROUP BY c.relname
  ORDER BY c.relname`;

// NOT NULL is stated on the column (PostgreSQL 18 and PGlite also list it as a constraint).
const CONSTRAINTS = `
  SELECT format('ALTER TABLE %I ADD CONSTRAINT %I %s;', c.relname, k.conname, pg_get_constraintdef(k.oid)) AS line
  FROM pg_constraint k
  JOIN pg_class c ON c.oid = k.conrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
  WHERE k.contype <> 'n'
  ORDER BY c.relname, k.conname`;

// Indexes that back a constraint are already stated by it.
const INDEXES = `
  SELECT pg_get_indexdef(i.indexrelid) || ';' AS line
  FROM pg_index i
  JOIN pg_class x ON x.oid = i.indexrelid
  JOIN pg_namespace n ON n.oid = x.relnamespace AND n.nspname = 'public'
  WHERE NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype IN ('p', 'u', 'x'))
  ORDER BY x.relname`;

const FUNCTIONS = `
  SELECT trim(pg_get_functiondef(p.oid)) || ';' AS line
  FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = 'public'
  ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`;

const TRIGGERS = `
  SELECT pg_get_triggerdef(t.oid) || ';' AS line
  FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
  WHERE NOT t.tgisinternal
  ORDER BY c.relname, t.tgname`;

/** The public schema of `database` as the text of `migrations/schema.sql`. */
export async function describeSchema(database: Database): Promise<string> {
  const tables = await database.runScript(TABLES);
  const sections = [tables.map((t) => `CREATE TABLE ${String(t.name)} (\n${String(t.columns)}\n);`).join('\n\n')];
  for (const query of [CONSTRAINTS, INDEXES, FUNCTIONS, TRIGGERS]) {
    sections.push((await database.runScript(query)).map((row) => String(row.line)).join('\n'));
  }
  return `${HEADER}\n${sections.join('\n\n')}\n`;
}

if (import.meta.main) {
  const database = await openPglite({});
  try {
    await migrate(database);
    await writeFile(SCHEMA_FILE, await describeSchema(database));
  } finally {
    await database.close();
  }
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}
