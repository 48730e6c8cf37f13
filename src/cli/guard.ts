import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { text } from 'node:stream/consumers';
import { promisify } from 'node:util';
import { Command, Option } from 'commander';
import { globCoversPath } from '../domain/globs.ts';
import { CliError, type Context, type Run } from './context.ts';
import { EXIT, exitCodeOf } from './exit-codes.ts';
import { principalNames } from './names.ts';
import { readPages } from './pages.ts';

const git = promisify(execFile);

/** The hooks `baton guard install` writes, and what each checks. */
const HOOKS = ['pre-commit', 'pre-push'] as const;
type Hook = (typeof HOOKS)[number];

/** Marks a hook file as ours, so install may replace it and leaves anyone else's alone. */
const MARK = '# Installed by `baton guard install`';

/** A reservation as the guard reads it from reservations_list. */
export interface Held {
  readonly id: string;
  readonly paths: readonly string[] | null;
  readonly mode: 'exclusive' | 'shared';
  readonly holder: { readonly id: string; readonly kind: string };
  readonly task_id: string | null;
  readonly expires_at: string;
}

/** A path the guard refuses: who holds it, with which glob, until when. */
export interface Refusal {
  readonly path: string;
  readonly glob: string;
  readonly reservation_id: string;
  readonly holder: { readonly id: string; readonly kind: string; readonly name?: string };
  readonly task_id: string | null;
  readonly until: string;
}

/**
 * The paths (of `paths`) that a live exclusive reservation of someone other than `me` covers, each
 * with the first such reservation and glob. Shared reservations and the caller's own never refuse.
 */
export function refusals(paths: readonly string[], reservations: readonly Held[], me: string): Refusal[] {
  const others = reservations.filter((r) => r.mode === 'exclusive' && r.holder.id !== me && r.paths !== null);
  return paths.flatMap((path) => {
    for (const r of others) {
      const glob = r.paths?.find((g) => globCoversPath(g, path));
      if (glob !== undefined) return [{ path, glob, reservation_id: r.id, holder: r.holder, task_id: r.task_id, until: r.expires_at }];
    }
    return [];
  });
}

/** The hook script for `hook`: runs `baton guard check` with what git hands that hook. */
export function hookScript(hook: Hook, command: string): string {
  return `#!/bin/sh\n${MARK}: refuses a ${hook === 'pre-commit' ? 'commit' : 'push'} touching paths someone else reserved in Baton.\n# Skip it once with --no-verify. See docs/guard.md.\nexec ${command} guard check --hook ${hook}\n`;
}

async function gitOut(args: readonly string[]): Promise<string> {
  try {
    return (await git('git', args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new CliError(`git ${args.join(' ')} failed: ${stderr || (error as Error).message}`, EXIT.failed);
  }
}

const nulSeparated = (out: string) => out.split('\0').filter(Boolean);

/** The paths a commit of the index touches (a rename as both its names). */
async function stagedPaths(): Promise<string[]> {
  return nulSeparated(await gitOut(['diff', '--cached', '--name-only', '--no-renames', '-z']));
}

const ZERO = /^0+$/;

/**
 * The paths the commits a push sends touch, from the lines git gives a pre-push hook on stdin
 * (`<local ref> <local sha> <remote ref> <remote sha>`): a new branch's commits not on any remote yet.
 */
async function pushedPaths(lines: string): Promise<string[]> {
  const paths = new Set<string>();
  for (const line of lines.split('\n')) {
    const [, local, , remote] = line.trim().split(/\s+/);
    if (!local || ZERO.test(local)) continue;
    const since = remote && !ZERO.test(remote) ? [`^${remote}`] : ['--not', '--remotes'];
    for (const path of nulSeparated(await gitOut(['log', '--format=', '--name-only', '--no-renames', '-z', local, ...since]))) paths.add(path.replace(/^\n+/, ''));
  }
  return [...paths].filter(Boolean);
}

/** The repository key: --repo, else BATON_REPO, else `git config baton.repo`. */
async function repoKey(ctx: Context, flag: string | undefined): Promise<string> {
  const key = flag ?? ctx.env.BATON_REPO ?? (await gitOut(['config', '--get', 'baton.repo']).catch(() => '')).trim();
  if (!key) {
    throw new CliError('No repository key to check reservations in: pass --repo, set BATON_REPO, or run `git config baton.repo github.com/acme/api` (the key your agents reserve paths in).', EXIT.usage);
  }
  return key;
}

interface CheckOptions {
  hook?: Hook;
  repo?: string;
  strict?: boolean;
}

interface InstallOptions {
  repo?: string;
  baton: string;
  force?: boolean;
  print?: boolean;
}

/**
 * `baton guard`: a git pre-commit and pre-push hook that refuses a commit or push touching paths
 * someone else holds an exclusive reservation on in Baton (spec/collaboration.md, "Reservations";
 * docs/guard.md). `install` writes the hooks; `check` is what they run.
 */
export function guardCommand(run: Run): Command {
  const guard = new Command('guard').description('a git hook that refuses commits touching paths someone else reserved (docs/guard.md)');
  guard
    .command('check')
    .description('exit 5 naming the holder if a staged (or pushed, or given) path is reserved exclusively by someone else')
    .argument('[paths...]', 'paths to check instead of the staged ones')
    .addOption(new Option('--hook <hook>', 'what to check: the staged paths (pre-commit) or the pushed commits, read from stdin (pre-push)').choices(HOOKS))
    .option('--repo <key>', 'the repository key reservations name (default: BATON_REPO, then git config baton.repo)')
    .option('--strict', 'refuse too when Baton cannot be asked (by default the check then warns and lets the commit through)')
    .action(
      run(async (ctx, given: string[], o: CheckOptions) => {
        const repo = await repoKey(ctx, o.repo);
        const paths = given.length > 0 ? given : o.hook === 'pre-push' ? await pushedPaths(await text(process.stdin)) : await stagedPaths();
        if (paths.length === 0) return;
        let found: Refusal[];
        try {
          const { client } = await ctx.connect();
          const me = await client.whoami({});
          const live = await readPages({ limit: 100, all: true }, (page) => client.reservations.list({ repo, state: 'active', ...page }));
          found = refusals(paths, live.data, me.principal.id);
          const names = await principalNames(client, found.map((r) => r.holder.id));
          found = found.map((r) => ({ ...r, holder: { ...r.holder, ...(names.has(r.holder.id) ? { name: names.get(r.holder.id) } : {}) } }));
        } catch (error) {
          // Only an unreachable or unavailable server lets a commit through, with a warning: a refused token is a failure.
          if (o.strict || exitCodeOf(error) !== EXIT.unavailable) throw error;
          ctx.out.note(`baton guard: could not check reservations in ${repo} (${(error as Error).message.split('\n')[0]}); letting this through (--strict refuses instead).`);
          return;
        }
        if (ctx.out.json) ctx.out.data({ repo, checked: paths.length, refused: found });
        if (found.length === 0) return;
        if (!ctx.out.json) {
          const what = o.hook === 'pre-push' ? 'push' : 'commit';
          ctx.out.note(`baton guard: ${what} refused: ${found.length} path(s) reserved by someone else in ${repo}:`);
          for (const r of found) {
            const who = `${r.holder.kind} ${r.holder.name ? `${r.holder.name} (${r.holder.id})` : r.holder.id}`;
            ctx.out.note(`  ${r.path}: reserved by ${who} with ${r.glob} until ${r.until}${r.task_id ? ` for task ${r.task_id}` : ''}`);
          }
          ctx.out.note(`Hint: leave these paths out (git restore --staged <path>), wait until the reservation ends, or ask its holder; git ${what} --no-verify skips this check.`);
        }
        process.exitCode = EXIT.conflict;
      }),
    );
  guard
    .command('install')
    .description("write pre-commit and pre-push hooks that run `baton guard check` into this repository's hooks directory")
    .option('--repo <key>', 'also set git config baton.repo to this repository key')
    .option('--baton <command>', 'how the hooks run baton', 'baton')
    .option('--force', 'replace hooks that baton did not write')
    .option('--print', 'only print the lines to add to your own hooks (core.hooksPath, husky)')
    .action(
      run(async (ctx, o: InstallOptions) => {
        if (o.repo) await gitOut(['config', 'baton.repo', o.repo]);
        const hooksPath = (await gitOut(['config', '--get', 'core.hooksPath']).catch(() => '')).trim();
        if (o.print || hooksPath) {
          if (hooksPath) ctx.out.note(`core.hooksPath is set (${hooksPath}): add these lines to your hooks there (with husky, .husky/pre-commit and .husky/pre-push):`);
          for (const hook of HOOKS) ctx.out.line(`${hook}: ${o.baton} guard check --hook ${hook}`);
          return;
        }
        const dir = (await gitOut(['rev-parse', '--git-path', 'hooks'])).trim();
        const root = (await gitOut(['rev-parse', '--show-toplevel'])).trim();
        const hooks = isAbsolute(dir) ? dir : join(process.cwd(), dir);
        await mkdir(hooks, { recursive: true });
        for (const hook of HOOKS) {
          const file = join(hooks, hook);
          const existing = await readFile(file, 'utf8').catch(() => undefined);
          if (existing !== undefined && !existing.includes(MARK) && !o.force) {
            throw new CliError(`${file} exists and is not baton's: add \`${o.baton} guard check --hook ${hook}\` to it, or rerun with --force to replace it.`, EXIT.conflict);
          }
          await writeFile(file, hookScript(hook, o.baton));
          await chmod(file, 0o755);
        }
        const repo = o.repo ?? ctx.env.BATON_REPO ?? (await gitOut(['config', '--get', 'baton.repo']).catch(() => '')).trim();
        ctx.out.note(`Installed ${HOOKS.join(' and ')} hooks in ${hooks} for ${root}${repo ? `, checking reservations in ${repo}` : '; set the repository key with git config baton.repo <key>'}.`);
      }),
    );
  return guard;
}
