import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { createIds } from '../../src/ids.ts';
import { bootstrapAdmin } from '../../src/service/bootstrap.ts';
import { type Database, openPglite } from '../../src/store/database.ts';
import { engine, freshDatabase, runsEngineFree } from '../harness.ts';
import { BATON, childEnv, runBaton } from './run-baton.ts';

/**
 * docs/operations.md runs as written: every ```sh block for this engine (`embedded`, `postgres`,
 * `any`) is run in order by bash with `baton` on the PATH; `cli` blocks are run by cli.test.ts.
 * `any` blocks run once, on PostgreSQL where it is configured: the commands in them are the same
 * on both engines, and each start of the command line on PGlite costs seconds.
 */

const DOC = new URL('../../docs/operations.md', import.meta.url);
const TAGS = { embedded: 'pglite', postgres: 'postgres', any: runsEngineFree ? engine : 'elsewhere', cli: 'cli' } as const;

let scratch: string;
let env: Record<string, string>;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-ops-doc-'));
  const bin = join(scratch, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'baton'), `#!/bin/sh\nexec "${process.execPath}" "${BATON}" "$@"\n`);
  await chmod(join(bin, 'baton'), 0o755);
  env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
  if (engine === 'pglite') {
    env.BATON_DATA_DIR = join(scratch, 'data');
    const restored = await runBaton(['restore', inject('pgliteDump')], env);
    expect(restored.code, restored.stderr).toBe(0);
    // A server that has started once keeps its webhook key here, and made the first admin.
    await writeFile(join(env.BATON_DATA_DIR, 'secret.key'), 'a'.repeat(64), { mode: 0o600 });
    await startedOnce(await openPglite({ dataDir: env.BATON_DATA_DIR }));
  } else {
    const { database, url } = await freshDatabase();
    await startedOnce(database);
    env.DATABASE_URL = url ?? '';
  }
}, 120_000);
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** Leaves `database` as a server's first start does, with its bootstrap admin (`baton admin-token` refuses a database without principals), and closes it. */
async function startedOnce(database: Database): Promise<void> {
  try {
    await bootstrapAdmin(database.db, { clock: systemClock, ids: createIds(), token: undefined });
  } finally {
    await database.close();
  }
}

async function blocks(): Promise<{ tag: string; script: string }[]> {
  const text = await readFile(DOC, 'utf8');
  return [...text.matchAll(/^ *```sh ?(\w*)\n([\s\S]*?)^ *```$/gm)].map((m) => ({ tag: m[1] ?? '', script: (m[2] ?? '').replace(/^ +/gm, '') }));
}

it('tags every shell block with where it runs', async () => {
  const found = await blocks();
  expect(found.length).toBeGreaterThan(5);
  expect(found.filter((b) => !(b.tag in TAGS))).toEqual([]);
  // `cli` blocks are the CLI test's commands.
  const cliTest = await readFile(new URL('cli.test.ts', import.meta.url), 'utf8');
  for (const b of found.filter((b) => b.tag === 'cli')) {
    for (const line of b.script.trim().split('\n')) expect(cliTest).toContain(`'${line.split(' ').slice(1, 3).join("', '")}'`);
  }
});

it(`runs every ${engine} block of docs/operations.md as written`, { timeout: 300_000 }, async () => {
  const mine = (await blocks()).filter((b) => TAGS[b.tag as keyof typeof TAGS] === engine);
  expect(mine.length).toBeGreaterThanOrEqual(2);
  for (const { script } of mine) {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: scratch, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    expect(code, `${script}\n---\n${output}`).toBe(0);
    if (script.includes('baton migrate')) expect(output).toMatch(/Database is up to date\.|Applied: /);
    if (script.includes('baton admin-token')) expect(output).toMatch(/^bat_\w+$/m);
    if (script.includes('baton backup')) expect(output).toContain('Backed up');
    if (script.includes('baton archive-events')) expect(output).toMatch(/^Archived \d+ events created before /m);
  }
});

it('says in its upgrade section that an older release starts on expand migrations and refuses contract ones (test/store/migrations.test.ts shows both)', async () => {
  const text = await readFile(DOC, 'utf8');
  const upgrades = text.slice(text.indexOf('## Upgrades and rollbacks'), text.indexOf('## Rotating secrets'));
  expect(upgrades).toMatch(/logs one warning line naming them, and serves/);
  expect(upgrades).toMatch(/refuses to start \(one line naming\s+them, exit 1\) only on a \*contract\* migration it does not know/);
  expect(upgrades).toMatch(/0\.2\.0 → the next release is the last upgrade where a restarted old instance refuses/);
});

it('is linked from the README', async () => {
  expect(await readFile(new URL('../../README.md', import.meta.url), 'utf8')).toContain('(docs/operations.md)');
});

it.skipIf(engine !== 'pglite')('shows `baton --help` in the README exactly as it prints, and every command answers --help', { timeout: 300_000 }, async () => {
  const help = await runBaton(['--help']);
  expect(help.code).toBe(0);
  expect(await readFile(new URL('../../README.md', import.meta.url), 'utf8')).toContain(`$ baton --help\n${help.stdout}\`\`\``);
  const paths = [
    ...['login', 'whoami', 'serve', 'migrate', 'token', 'mcp', 'admin-token', 'backup', 'restore', 'archive-events'].map((c) => [c]),
    ...['list', 'show', 'create', 'update', 'move', 'claim', 'heartbeat', 'release', 'events', 'watch'].map((c) => ['tasks', c]),
    ['agents', 'list'], ['agents', 'create'], ['agents', 'set-role'], ['agents', 'disable'], ['schedules', 'create'], ['schedules', 'pause'], ['tokens', 'create'], ['tokens', 'revoke'], ['approvals', 'list'], ['approvals', 'approve'], ['approvals', 'deny'],
  ];
  for (const path of paths) {
    const { code, stdout } = await runBaton([...path, '--help']);
    expect(code, path.join(' ')).toBe(0);
    expect(stdout).toContain(`Usage: baton ${path.join(' ')}`);
    expect(stdout).toContain('--json');
  }
});
