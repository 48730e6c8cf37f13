import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { type Config, loadConfig, loadStdioConfig } from '../config.ts';
import { embeddedCreationNotice, explainStartupError } from '../startup.ts';
import { generateToken } from '../tokens.ts';
import { CliError, type Context } from './context.ts';
import { EXIT } from './exit-codes.ts';

type Action = (ctx: Context, ...args: never[]) => Promise<void>;
type Run = (action: Action) => (...args: unknown[]) => Promise<void>;

// The server, the database drivers and the MCP SDK load only for the commands that use them, so
// the API commands start quickly.
const server = () => import('../server.ts');

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
    run(async (ctx) => ctx.out.line(generateToken())),
  );

  const mcp = new Command('mcp')
    .description("serve MCP on stdio for a local agent, forwarding to a Baton server's /mcp (BATON_URL, BATON_TOKEN)")
    .action(async () => (await import('../adapters/mcp/stdio-proxy.ts')).serveStdioProxy(loadStdioConfig(process.env)));

  const adminToken = new Command('admin-token')
    .description('mint a new admin token straight in the database (for a lost bootstrap token); needs the server’s DATABASE_URL or data dir')
    .action(
      run(async (ctx) => {
        const minted = await direct(ctx, async (config) => (await server()).mintAdminTokenDirectly(config));
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
        const config = embeddedOnly(ctx, 'backup', 'pg_dump --format=custom --file=baton.dump "$DATABASE_URL"');
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
        const config = embeddedOnly(ctx, 'restore', 'pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" baton.dump');
        if (existsSync(join(config.dataDir, 'PG_VERSION'))) {
          throw new CliError(`${resolve(config.dataDir)} (BATON_DATA_DIR) already holds a database: move it aside or point BATON_DATA_DIR at a new directory.`, EXIT.usage);
        }
        const bytes = await readFile(file);
        const applied = await ctx.out.progress('restoring', direct(ctx, async () => (await server()).restoreEmbedded(config, bytes)));
        ctx.out.line(`Restored ${resolve(file)} into ${resolve(config.dataDir)}${applied.length > 0 ? `; applied ${applied.join(', ')}` : ''}.`);
      }),
    );

  return [serve, migrate, token, mcp, adminToken, backup, restore];
}

/** Runs `work` on the configured database, turning a failure to reach it into the startup line that says what to change. */
async function direct<T>(ctx: Context, work: (config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig(ctx.env);
  const notice = embeddedCreationNotice(config);
  if (notice) ctx.out.note(notice);
  try {
    return await work(config);
  } catch (error) {
    throw new CliError(explainStartupError(error, config), EXIT.failed);
  }
}

function embeddedOnly(ctx: Context, what: string, instead: string): Config {
  const config = loadConfig(ctx.env);
  if (config.databaseUrl) throw new CliError(`baton ${what} is for the embedded database; with DATABASE_URL use PostgreSQL's own tools: ${instead}`, EXIT.usage);
  return config;
}
