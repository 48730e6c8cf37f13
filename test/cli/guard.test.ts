import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engine, freshDatabase } from '../harness.ts';
import { BATON, bootstrapToken, childEnv, freePort, runBaton, type Started, startBaton } from './run-baton.ts';

/**
 * `baton guard` (issue 42 §1) in a real temporary git repository against a real `baton serve`: the
 * hooks `baton guard install` writes refuse a commit or a push touching paths another principal
 * reserved exclusively, naming the holder, the glob and until when; they let the holder's own
 * commits and paths nobody reserved through.
 */

const REPO_KEY = 'github.com/acme/guarded';
let scratch: string;
let server: Started | undefined;
let url: string;
let adminToken: string;
/** A `baton` on PATH for the hooks: this Node running the checkout's CLI. */
let bin: string;

const run = promisify(execFile);

interface Agent {
  id: string;
  token: string;
}

async function api<T>(path: string, body: unknown, token = adminToken): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}

async function agent(name: string): Promise<Agent> {
  const created = await api<{ id: string }>('/agents', { name, kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const token = await api<{ token: string }>(`/agents/${created.body.id}/tokens`, { machine: `${name}-box` });
  expect(token.status, JSON.stringify(token.body)).toBe(201);
  return { id: created.body.id, token: token.body.token };
}

/** Runs git in `cwd` as `who` (their Baton token in the hooks' environment); answers the exit code and output. */
async function gitAs(cwd: string, who: Agent | null, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = childEnv({
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    XDG_CONFIG_HOME: join(scratch, 'config'),
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    ...(who ? { BATON_URL: url, BATON_TOKEN: who.token } : {}),
  });
  try {
    const { stdout, stderr } = await run('git', args, { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function newRepo(name: string): Promise<string> {
  const dir = join(scratch, name);
  await mkdir(join(dir, 'src'), { recursive: true });
  await mkdir(join(dir, 'docs'), { recursive: true });
  expect((await gitAs(dir, null, ['init', '-q', '-b', 'main'])).code).toBe(0);
  return dir;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-guard-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const serverEnv: Record<string, string> = { PORT: String(port), HOST: '127.0.0.1', BATON_LOG_LEVEL: 'warn', BATON_DATA_DIR: join(scratch, 'data') };
  if (engine === 'pglite') {
    const restored = await runBaton(['restore', inject('pgliteDump')], serverEnv);
    expect(restored.code, restored.stderr).toBe(0);
  } else {
    const { database, url: databaseUrl } = await freshDatabase();
    await database.close();
    serverEnv.DATABASE_URL = databaseUrl ?? '';
  }
  server = startBaton(['serve'], serverEnv);
  adminToken = await bootstrapToken(server);
  bin = join(scratch, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'baton'), `#!/bin/sh\nexec "${process.execPath}" "${BATON}" "$@"\n`);
  await chmod(join(bin, 'baton'), 0o755);
}, 300_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.outcome;
  await rm(scratch, { recursive: true, force: true });
});

describe('baton guard', () => {
  it('refuses a commit and a push touching paths someone else reserved, naming the holder, the glob and until when', { timeout: 180_000 }, async () => {
    const [holder, other] = await Promise.all([agent('holder-bot'), agent('other-bot')]);
    const held = await api<{ id: string; expires_at: string }>('/reservations', { repo: REPO_KEY, paths: ['src/**'], ttl_s: 3600 }, holder.token);
    expect(held.status).toBe(201);
    await api('/reservations', { repo: REPO_KEY, paths: ['docs/**'], mode: 'shared' }, holder.token);
    const repo = await newRepo('work');

    const install = await installIn(repo);
    expect(install.stderr).toContain(`checking reservations in ${REPO_KEY}`);
    expect(await readFile(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8')).toContain('baton guard check --hook pre-commit');
    expect((await gitAs(repo, null, ['config', 'baton.repo'])).stdout.trim()).toBe(REPO_KEY);

    // Someone else's commit of src/a.ts is refused; their docs (shared) and README (unreserved) go through.
    await writeFile(join(repo, 'src', 'a.ts'), 'export const a = 1;\n');
    await writeFile(join(repo, 'README.md'), '# guarded\n');
    await writeFile(join(repo, 'docs', 'guide.md'), 'guide\n');
    await gitAs(repo, other, ['add', 'src/a.ts', 'README.md']);
    const refused = await gitAs(repo, other, ['commit', '-q', '-m', 'touch src']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`commit refused: 1 path(s) reserved by someone else in ${REPO_KEY}`);
    expect(refused.stderr).toContain(`src/a.ts: reserved by agent holder-bot (${holder.id}) with src/** until ${held.body.expires_at}`);
    expect((await gitAs(repo, other, ['log', '--oneline'])).code).not.toBe(0);
    expect((await gitAs(repo, other, ['rm', '-q', '--cached', 'src/a.ts'])).code).toBe(0);
    await gitAs(repo, other, ['add', 'docs/guide.md']);
    const allowed = await gitAs(repo, other, ['commit', '-q', '-m', 'docs and readme']);
    expect(allowed.code, allowed.stderr).toBe(0);

    // The holder commits its own reserved paths.
    await gitAs(repo, holder, ['add', 'src/a.ts']);
    const own = await gitAs(repo, holder, ['commit', '-q', '-m', 'holder writes src']);
    expect(own.code, own.stderr).toBe(0);

    // A push of commits touching src/** by someone else is refused; the holder's push goes through.
    const remote = join(scratch, 'remote.git');
    expect((await gitAs(scratch, null, ['init', '-q', '--bare', remote])).code).toBe(0);
    await gitAs(repo, null, ['remote', 'add', 'origin', remote]);
    const pushRefused = await gitAs(repo, other, ['push', '-q', 'origin', 'main']);
    expect(pushRefused.code).not.toBe(0);
    expect(pushRefused.stderr).toContain(`push refused: 1 path(s) reserved by someone else in ${REPO_KEY}`);
    expect(pushRefused.stderr).toContain(`src/a.ts: reserved by agent holder-bot (${holder.id}) with src/**`);
    const pushed = await gitAs(repo, holder, ['push', '-q', 'origin', 'main']);
    expect(pushed.code, pushed.stderr).toBe(0);

    // Once the reservation is released, the other's commit of src goes through.
    await api(`/reservations/${held.body.id}/release`, {}, holder.token);
    await writeFile(join(repo, 'src', 'a.ts'), 'export const a = 2;\n');
    await gitAs(repo, other, ['add', 'src/a.ts']);
    const after = await gitAs(repo, other, ['commit', '-q', '-m', 'after release']);
    expect(after.code, after.stderr).toBe(0);
  });

  it('check names paths given on the command line under --json; install leaves foreign hooks alone and prints the lines for core.hooksPath', { timeout: 120_000 }, async () => {
    const [holder, other] = await Promise.all([agent('json-holder'), agent('json-other')]);
    await api('/reservations', { repo: 'github.com/acme/json', paths: ['lib/*.ts'] }, holder.token);
    const checked = await runBaton(['guard', 'check', '--repo', 'github.com/acme/json', '--json', 'lib/x.ts', 'lib/deep/y.ts'], { BATON_URL: url, BATON_TOKEN: other.token });
    expect(checked.code, checked.stderr).toBe(5);
    expect(JSON.parse(checked.stdout)).toMatchObject({ repo: 'github.com/acme/json', checked: 2, refused: [{ path: 'lib/x.ts', glob: 'lib/*.ts', holder: { id: holder.id, kind: 'agent' } }] });
    const noKey = await runBaton(['guard', 'check', 'lib/x.ts'], { BATON_URL: url, BATON_TOKEN: other.token });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('git config baton.repo');

    const repo = await newRepo('foreign');
    await writeFile(join(repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n');
    const foreign = await installIn(repo, [], 5);
    expect(foreign.stderr).toContain('exists and is not baton\'s');
    await gitAs(repo, null, ['config', 'core.hooksPath', '.husky']);
    const printed = await installIn(repo);
    expect(printed.stdout).toBe('pre-commit: baton guard check --hook pre-commit\npre-push: baton guard check --hook pre-push\n');
    expect(printed.stderr).toContain('core.hooksPath is set (.husky)');
  });
});

/** `baton guard install` in `repo`; fails the test unless it exits `expected`. */
async function installIn(repo: string, args: string[] = ['--repo', REPO_KEY], expected = 0) {
  const outcome = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [BATON, 'guard', 'install', ...args], { cwd: repo, env: childEnv({ GIT_CONFIG_NOSYSTEM: '1' }) }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
  expect(outcome.code, outcome.stderr).toBe(expected);
  return outcome;
}
