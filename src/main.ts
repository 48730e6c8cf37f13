import { lookup } from 'node:dns/promises';
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { createServer, type Server } from './server.ts';
import { bootstrapTokenNotice, embeddedCreationNotice, explainStartupError } from './startup.ts';

/** `npm start` and `baton serve`: serve Baton with the configuration in the environment. */
export async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, redact: ['req.headers.authorization', 'headers.authorization'] });
  let server: Server | undefined;
  let stopping: string | undefined;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = signal;
    logger.info({ signal }, 'shutting down');
    // A signal during startup is answered once startup ends (below); the lock is released either way.
    if (server) void closeAndExit(server);
  };
  // Installed before anything is printed: a supervisor that stops Baton the moment it reads
  // "serving" must reach this handler, not the default one that kills without releasing the lock.
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  let address: string;
  try {
    // HOST is resolved first, so a name that does not resolve fails before the database is opened.
    await lookup(config.host);
    const notice = embeddedCreationNotice(config);
    if (notice) process.stdout.write(`${notice}\n`);
    server = await createServer(config, { logger });
    address = await server.app.listen({ port: config.port, host: config.host });
    if (server.metricsApp && config.metricsAddress) await server.metricsApp.listen(config.metricsAddress);
  } catch (error) {
    // One line saying what to change, never a stack trace (docs/operations.md lists them).
    process.stderr.write(`${explainStartupError(error, config)}\n`);
    // The first principal was made before listening failed; its token is shown now or never.
    if (server?.bootstrapToken) process.stdout.write(await bootstrapTokenNotice(server.bootstrapToken, config, process.stdout.isTTY === true));
    await server?.close().catch(() => undefined);
    process.exit(1);
  }
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  process.stdout.write(`\nBaton is serving at ${address} (web app ${server.service.baseUrl}/, API ${server.service.baseUrl}/api/v1, database: ${where})\n`);
  if (server.bootstrapToken) process.stdout.write(await bootstrapTokenNotice(server.bootstrapToken, config, process.stdout.isTTY === true));
  // Stopped while starting: the token above is still printed, as it is shown only once.
  if (stopping) await closeAndExit(server);
}

async function closeAndExit(server: Server): Promise<never> {
  const code = await server.close().then(
    () => 0,
    () => 1,
  );
  process.exit(code);
}

if (import.meta.main) {
  // `node src/main.ts migrate` used to start a server: arguments belong to the command line.
  const args = process.argv.slice(2);
  if (args.length > 0) {
    process.stderr.write(`src/main.ts (npm start) takes no arguments, got: ${args.join(' ')}\nFor commands use the command line: npx baton-tasks serve | migrate | token | mcp (npm run migrate migrates).\n`);
    process.exit(2);
  }
  await main();
}
