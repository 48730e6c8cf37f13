import { existsSync } from 'node:fs';
import { open, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { Config } from '../config.ts';
import { CliError, type Context, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';

// The server, the database drivers, the MCP SDK and even the configuration's Zod schema load only
// for the commands that use them, so the API commands start quickly (bench/cli-startup.ts).
const server = () => import('../server.ts');
const configuration = () => import('../config.ts');

/**
 * The commands that run beside the database rather than through the API: serving, migrating,
 * recovery, backups. They read the server's own configuration (DATABASE_URL or BATON_DATA_DIR).
 */
export function serverCommands(run: Run): Command[] {
  const serve = new Command('serve').description('serve Baton (the same as npm start); configuration from the environment').action(async () => (await import('../main.ts')).main());

  const migrate = new Command('migrate')
    .description('apply pending database migrations and exit (DATABASE_URL, or the PGlite data dir)')
    .action(
      run(async (ctx) => {
        const applied = await direct(ctx, async (config) => (await server()).migrateDatabase(config));
        ctx.out.line(applied.length > 0 ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
      }),
    );

  const token = new Command('token').description('print a new well-formed token, e.g. for BATON_BOOTSTRAP_TOKEN').action(
    run(async (ctx) => ctx.out.line((await import('../tokens.ts')).generateToken())),
  );

  const mcp = new Command('mcp')
    .description("serve MCP on stdio for a local agent, forwarding to a Baton server's /mcp (BATON_URL, BATON_TOKEN)")
    .addOption(new Option('--api <version>', "the API version of the tools' answers: v2 is leaner tasks (spec/api.md#versions)").choices(['v1', 'v2']).default('v1'))
    .action(async (options: { api: 'v1' | 'v2' }) => {
      const { serveStdioProxy, ServerUnreachable } = await import('../adapters/mcp/stdio-proxy.ts');
      const config = (await configuration()).loadStdioConfig(process.env);
      await serveStdioProxy({ ...config, api: options.api }).catch((error: unknown) => {
        throw error instanceof ServerUnreachable ? new CliError(error.message, EXIT.unavailable) : error;
      });
    });

  const adminToken = new Command('admin-token')
    .description('mint a new admin token straight in the database (for a lost bootstrap token); needs the server’s DATABASE_URL or data dir')
    .action(
      run(async (ctx) => {
        // No "Creating the embedded database" notice: it creates none.
        const minted = await direct(ctx, async (config) => (await server()).mintAdminTokenDirectly(config), { creates: false });
        if (ctx.out.json) return ctx.out.data({ token: minted.token, token_id: minted.tokenId, agent_id: minted.agentId });
        ctx.out.note(`New admin token ${minted.tokenId} for ${minted.agentName} (${minted.agentId}); a token.created event by the system records it. Shown once:`);
        ctx.out.line(minted.token);
      }),
    );

  const backup = new Command('backup')
    .description('write the embedded database (BATON_DATA_DIR) to one file; stop the server first')
    .argument('<file>', 'where to write the backup (a tar file)')
    .action(
      run(async (ctx, file: string) => {
        const config = await embeddedOnly(ctx, 'backup', 'pg_dump --format=custom --file=baton.dump "$DATABASE_URL"');
        if (!existsSync(join(config.dataDir, 'PG_VERSION'))) throw new CliError(`No embedded database in ${resolve(config.dataDir)} (BATON_DATA_DIR) to back up.`, EXIT.usage);
        const bytes = await ctx.out.progress('backing up', direct(ctx, async () => (await server()).backupEmbedded(config)));
        await writeFile(file, bytes, { mode: 0o600 });
        ctx.out.line(`Backed up ${resolve(config.dataDir)} to ${resolve(file)} (${bytes.length} bytes).`);
      }),
    );

  const restore = new Command('restore')
    .description('restore a `baton backup` file into a new, empty BATON_DATA_DIR, then migrate it')
    .argument('<file>', 'a file written by baton backup')
    .action(
      run(async (ctx, file: string) => {
        const config = await embeddedOnly(ctx, 'restore', 'pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" baton.dump');
        if (existsSync(join(config.dataDir, 'PG_VERSION'))) {
          throw new CliError(`${resolve(config.dataDir)} (BATON_DATA_DIR) already holds a database: move it aside or point BATON_DATA_DIR at a new directory.`, EXIT.usage);
        }
        if (!existsSync(file)) throw new CliError(`No backup file ${resolve(file)}: give the path of a file written by baton backup.`, EXIT.usage);
        const bytes = await readFile(file);
        const applied = await ctx.out.progress('restoring', direct(ctx, async () => (await server()).restoreEmbedded(config, bytes)));
        ctx.out.line(`Restored ${resolve(file)} into ${resolve(config.dataDir)}${applied.length > 0 ? `; applied ${applied.join(', ')}` : ''}.`);
      }),
    );

  const archive = new Command('archive-events')
    .description('move events created before a cutoff to a JSON-lines file and delete them from the database (retention)')
    .requiredOption('--before <when>', 'the cutoff: an ISO date or time, or an age such as 90d, 12h or 30m')
    .requiredOption('--out <file>', 'the archive file; lines are appended, one event per line with its seq and workspace_id')
    .option('--workspace <id>', 'archive this workspace only (wsp_…); default: every workspace')
    .action(
      run(async (ctx, options: { before: string; out: string; workspace?: string }) => {
        const before = parseCutoff(options.before, new Date());
        if (options.workspace !== undefined && !/^wsp_[0-9A-HJKMNP-TV-Z]{26}$/.test(options.workspace)) {
          throw new CliError(`--workspace ${options.workspace}: give a workspace id (wsp_ and 26 characters; baton workspaces list shows them).`, EXIT.usage);
        }
        const file = await open(options.out, 'a', 0o600);
        try {
          const write = async (lines: string) => {
            await file.appendFile(lines);
            await file.datasync();
          };
          const report = await ctx.out.progress(
            'archiving',
            direct(ctx, async (config) =>
              (await server()).archiveEventsDirectly(config, { before, file: resolve(options.out), write, ...(options.workspace ? { workspaceId: options.workspace } : {}) }),
            ),
          );
          const first = report.workspaces[0];
          if (ctx.out.json) {
            const workspaces = report.workspaces.map((w) => ({ workspace_id: w.workspaceId, archived: w.archived, oldest_cursor: w.oldestRetainedId, held_back: w.heldBack }));
            // `oldest_cursor` and `held_back` at the top are the first workspace's, as before workspaces.
            return ctx.out.data({ archived: report.archived, before: before.toISOString(), file: resolve(options.out), oldest_cursor: first?.oldestRetainedId ?? null, held_back: first?.heldBack ?? null, workspaces });
          }
          ctx.out.line(`Archived ${report.archived} events created before ${before.toISOString()} to ${resolve(options.out)}.`);
          const several = report.workspaces.length > 1;
          for (const w of report.workspaces) {
            if (several) ctx.out.line(`${w.workspaceId}: ${w.archived} archived; ${w.oldestRetainedId ? `its oldest event still served is ${w.oldestRetainedId}` : 'none of its events are left'}.`);
            else ctx.out.line(w.oldestRetainedId ? `The oldest event still served is ${w.oldestRetainedId}; an older since cursor now gets 410 cursor_archived.` : 'No events are left in the database.');
            if (w.heldBack) ctx.out.note(`${several ? `${w.workspaceId}: ` : ''}${heldBackNote(w.heldBack)}`);
          }
          if (several) ctx.out.line("A since cursor older than its workspace's oldest event now gets 410 cursor_archived.");
        } finally {
          await file.close();
        }
      }),
    );

  return [serve, migrate, token, mcp, adminToken, backup, restore, archive];
}

/** `--before`: an ISO date or time, or an age (`90d`, `12h`, `30m`) counted back from `now`. */
export function parseCutoff(text: string, now: Date): Date {
  const age = /^(\d+)([dhm])$/.exec(text.trim());
  if (age) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[age[2] as 'd' | 'h' | 'm'];
    return new Date(now.getTime() - Number(age[1]) * unit);
  }
  const date = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw new CliError(`--before ${text}: give an ISO date or time (2026-01-31, 2026-01-31T12:00:00Z) or an age such as 90d, 12h or 30m.`, EXIT.usage);
  }
  if (date > now) throw new CliError(`--before ${text} is in the future: archiving only takes events older than a cutoff in the past.`, EXIT.usage);
  return date;
}

function heldBackNote(stop: { reason: string; webhook_id?: string }): string {
  switch (stop.reason) {
    case 'webhook_cursor':
      return `Stopped before the cutoff: webhook ${stop.webhook_id} has not yet fanned out the next events (it may be disabled). Re-enable it and let it catch up, or delete it, then run again.`;
    case 'pending_delivery':
      return `Stopped before the cutoff: webhook ${stop.webhook_id} still has a delivery pending for the next event. Let it be delivered (or fail), then run again.`;
    case 'busy':
      return 'Stopped before the cutoff: another archiving run (the retention worker, or another baton archive-events) is at this workspace. Run again in a moment.';
    default:
      return 'Stopped before the cutoff: a transaction still in progress could commit an older event. Run again in a moment.';
  }
}

/**
 * Runs `work` on the configured database, turning a failure to reach it into the startup line that
 * says what to change. Says first when it is about to create the embedded database, unless the
 * command never creates one.
 */
async function direct<T>(ctx: Context, work: (config: Config) => Promise<T>, options = { creates: true }): Promise<T> {
  const config = (await configuration()).loadConfig(ctx.env);
  const { embeddedCreationNotice, explainStartupError } = await import('../startup.ts');
  const notice = options.creates ? embeddedCreationNotice(config) : undefined;
  if (notice) ctx.out.note(notice);
  try {
    return await work(config);
  } catch (error) {
    throw new CliError(explainStartupError(error, config), EXIT.failed);
  }
}

async function embeddedOnly(ctx: Context, what: string, instead: string): Promise<Config> {
  const config = (await configuration()).loadConfig(ctx.env);
  if (config.databaseUrl) throw new CliError(`baton ${what} is for the embedded database; with DATABASE_URL use PostgreSQL's own tools: ${instead}`, EXIT.usage);
  return config;
}
