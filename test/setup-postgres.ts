import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPostgres } from '../src/store/database.ts';
import { migrate } from '../src/store/migrate.ts';
import { databaseUrl } from './postgres-url.ts';

/**
 * Creates this run's template database, migrated once; each test file clones it with
 * CREATE DATABASE … TEMPLATE. Teardown drops every database this run made. Throws (failing the
 * run) when PostgreSQL is unreachable.
 */
export default async function setup(project: TestProject) {
  const adminUrl = process.env.BATON_TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('BATON_TEST_DATABASE_URL is not set');
  const runId = `baton_test_${randomBytes(4).toString('hex')}`;
  const template = `${runId}_tpl`;
  const admin = new pg.Client({ connectionString: adminUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`PostgreSQL at BATON_TEST_DATABASE_URL is unreachable: ${(error as Error).message}`);
  }
  await admin.query(`CREATE DATABASE ${template}`);
  const database = openPostgres(databaseUrl(adminUrl, template), 2);
  await migrate(database);
  await database.close();
  project.provide('postgresTemplate', template);
  project.provide('postgresRunId', runId);
  return async () => {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${runId}%`]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await admin.end();
  };
}
