import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { createServer } from './server.ts';
import { StartupError } from './startup-error.ts';

/** `npm start`: serve Baton with the configuration in the environment. */
export async function main(): Promise<void> {
  // `node src/main.ts migrate` used to start a server: arguments belong to the command line.
  const args = process.argv.slice(2);
  if (args.length > 0) {
    process.stderr.write(`src/main.ts (npm start) takes no arguments, got: ${args.join(' ')}\nFor commands use the command line: npx baton serve | migrate | token | mcp (npm run migrate migrates).\n`);
    process.exit(2);
  }
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
  const server = await createServer(config, { logger }).catch((error: unknown) => {
    if (!(error instanceof StartupError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
  const address = await server.app.listen({ port: config.port, host: config.host });
  const where = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  process.stdout.write(`\nBaton is serving at ${address} (web app ${server.service.baseUrl}/, API ${server.service.baseUrl}/api/v1, database: ${where})\n`);
  if (server.bootstrapToken) {
    process.stdout.write(
      `\nBootstrap admin token (shown once; store it now):\n\n  ${server.bootstrapToken}\n\n` +
        `Try: curl -H "Authorization: Bearer ${server.bootstrapToken}" ${server.service.baseUrl}/api/v1/whoami\n\n`,
    );
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

if (import.meta.main) await main();
