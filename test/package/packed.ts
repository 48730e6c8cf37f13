import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout this file is in. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** What the package builds read (and `files` ships): a copy of these is packed, so the checkout's own web/dist and dist stay as they are. */
const INPUTS = ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'web', 'migrations', 'spec', 'scripts', 'packages/client'];
const BUILT = /\/(dist|\.build)$/;

/** How this machine reaches the npm registry (a proxy and its certificate authority), passed on to npm. */
const NETWORK = /^(NODE_EXTRA_CA_CERTS|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy|npm_config_(registry|cafile|proxy|https_proxy|strict_ssl))$/;

/** Children run by this Node first on PATH, as `npm test` runs them, with this machine's way to the registry. */
export function toolEnv(extra: Record<string, string> = {}): Record<string, string> {
  const network = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => NETWORK.test(entry[0]) && entry[1] !== undefined));
  return { ...network, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? tmpdir(), ...extra };
}

/** Runs a command to its exit; rejects with its output when it fails. */
export async function run(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<{ stdout: string; stderr: string }> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? toolEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${stdout}\n${stderr}`);
  return { stdout, stderr };
}

export interface Packed {
  /** The server package's tarball (`baton-tasks-<version>.tgz`) and the client's. */
  readonly server: string;
  readonly client: string;
  remove(): Promise<void>;
}

/**
 * `npm pack`s the server and the client package as a release would (their prepack scripts build
 * them), from a copy of the checkout's inputs in a temporary folder sharing its node_modules.
 */
export async function packBoth(): Promise<Packed> {
  const stage = await mkdtemp(join(tmpdir(), 'baton-stage-'));
  for (const input of INPUTS) await cp(join(REPO, input), join(stage, input), { recursive: true, filter: (source) => !BUILT.test(source) });
  await symlink(join(REPO, 'node_modules'), join(stage, 'node_modules'), 'dir');
  const out = join(stage, 'tarballs');
  await mkdir(out);
  await Promise.all([stage, join(stage, 'packages/client')].map((dir) => run('npm', ['pack', '--pack-destination', out], { cwd: dir })));
  const tarballs = await readdir(out);
  const named = (pattern: RegExp) => {
    const file = tarballs.find((name) => pattern.test(name));
    if (!file) throw new Error(`npm pack wrote no ${pattern} in ${out}: ${tarballs.join(', ')}`);
    return join(out, file);
  };
  return { server: named(/^baton-tasks-\d/), client: named(/^baton-tasks-client-\d/), remove: () => rm(stage, { recursive: true, force: true }) };
}

/**
 * A fresh project in the system's temporary folder with `tarballs` installed as a user would. The
 * server's own dependencies are pinned (`overrides`) to the versions the checkout's lockfile holds,
 * so npm's cache, which `npm ci` filled, serves them: a dependency's newer release would otherwise
 * be fetched from the registry, which this machine may not reach.
 */
export async function installInto(prefix: string, tarballs: readonly string[]): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), prefix));
  const overrides = await lockedDependencies();
  await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'baton-packed-check', private: true, type: 'module', overrides }, null, 2)}\n`);
  // A registry request that stalls is given up after 30 s and tried again (npm waits 5 minutes by
  // default, twice over: a stalled connection in CI cost the whole test its 10-minute setup).
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--fetch-timeout=30000', '--fetch-retries=4', ...tarballs], { cwd: project });
  return project;
}

/** The lockfile's version of each of the server's dependencies, by name. */
async function lockedDependencies(): Promise<Record<string, string>> {
  const manifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const lock = JSON.parse(await readFile(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const versions: Record<string, string> = {};
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const version = lock.packages[`node_modules/${name}`]?.version;
    if (version) versions[name] = version;
  }
  return versions;
}

/** The size of a file in bytes. */
export async function sizeOf(file: string): Promise<number> {
  return (await stat(file)).size;
}

export interface Process {
  readonly child: ChildProcess;
  readonly outcome: Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Resolves once stdout matches `pattern` (rejects if the process ends first). */
  printed(pattern: RegExp): Promise<void>;
  /** Sends SIGTERM to it and whatever it started (npx runs the bin as its child), and waits for its end. */
  stop(): Promise<void>;
}

/** Starts `command …args` in `cwd` without waiting for it, collecting what it prints. */
export function start(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Process {
  // Its own process group, so that stop() reaches the children too.
  const child = spawn(command, args, { cwd: options.cwd, env: toolEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const outcome = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  const printed = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(stdout)) return;
        child.stdout.off('data', check);
        resolve();
      };
      child.stdout.on('data', check);
      check();
      void outcome.then((o) => reject(new Error(`exited ${o.code} before printing ${pattern}:\n${o.stdout}\n${o.stderr}`)));
    });
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    await outcome;
  };
  return { child, outcome, printed, stop };
}
