import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openPglite } from '../src/store/database.ts';
import { migrate } from '../src/store/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteDump: string;
    postgresTemplate: string;
    postgresRunId: string;
  }
}

/** Migrates one PGlite database and dumps it; every test file starts from a copy (cold init costs seconds). */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), 'baton-test-'));
  const database = await openPglite({});
  await migrate(database);
  const path = join(dir, 'migrated.tar');
  await writeFile(path, Buffer.from(await (await database.dump()).arrayBuffer()));
  await database.close();
  project.provide('pgliteDump', path);
  return () => rm(dir, { recursive: true, force: true });
}
