import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { bootstrapToken, freePort, runBaton, type Started, startBaton } from '../cli/run-baton.ts';
import { engine, freshDatabase } from '../harness.ts';

/**
 * The bootstrap admin token never reaches output a journal keeps: `baton serve` under a supervisor
 * (stdout not a terminal) writes it to a 0600 file beside the data directory and prints the path.
 */

let scratch: string | undefined;
let server: Started | undefined;
afterAll(async () => {
  if (server?.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.outcome;
  }
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

it('a first start off a terminal writes the token to a file readable by its owner only and prints only the path', { timeout: 180_000 }, async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-bootstrap-'));
  const port = await freePort();
  const env: Record<string, string> = { PORT: String(port), HOST: '127.0.0.1', BATON_LOG_LEVEL: 'info', BATON_DATA_DIR: join(scratch, 'data') };
  if (engine === 'pglite') {
    const restored = await runBaton(['restore', inject('pgliteDump')], env);
    expect(restored.code, restored.stderr).toBe(0);
  } else {
    const { database, url } = await freshDatabase();
    await database.close();
    env.DATABASE_URL = url ?? '';
  }
  server = startBaton(['serve'], env);
  const token = await bootstrapToken(server);
  expect(token).toMatch(/^bat_/);
  const file = join(scratch, 'bootstrap-admin-token');
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  const whoami = await fetch(`http://127.0.0.1:${port}/api/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  expect(whoami.status).toBe(200);
  server.child.kill('SIGTERM');
  const { stdout, stderr } = await server.outcome;
  expect(stdout).toContain(`Bootstrap admin token written to ${file} `);
  // Nothing it printed or logged (the request lines included) holds the token.
  expect(stdout + stderr).not.toContain(token);
});
