#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { serveStdioProxy } from '../adapters/mcp/stdio-proxy.ts';
import { ConfigError, loadConfig, loadStdioConfig } from '../config.ts';
import { main } from '../main.ts';
import { migrateDatabase } from '../server.ts';
import { StartupError } from '../startup-error.ts';
import { generateToken } from '../tokens.ts';

const USAGE = `Usage: baton <command>

Commands:
  serve     Serve Baton (the same as npm start); configuration from the environment
  migrate   Apply pending database migrations and exit (DATABASE_URL, or the PGlite data dir)
  token     Print a new well-formed token, e.g. for BATON_BOOTSTRAP_TOKEN
  mcp       Serve MCP on stdio for a local agent, forwarding to a Baton server's /mcp
            (BATON_URL, default http://127.0.0.1:3000; BATON_TOKEN, the agent's token)
`;

/** `baton`: the operator's command line. */
async function run(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  const [command] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'serve':
      await main();
      return -1;
    case 'migrate': {
      const applied = await migrateDatabase(loadConfig(process.env));
      process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Database is up to date.\n');
      return 0;
    }
    case 'mcp':
      await serveStdioProxy(loadStdioConfig(process.env));
      return -1;
    case 'token':
      process.stdout.write(`${generateToken()}\n`);
      return 0;
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

// exitCode, not exit(): a pending write to a piped stdout would be cut off.
try {
  const code = await run(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (error) {
  process.stderr.write(`${error instanceof ConfigError || error instanceof StartupError ? error.message : String(error)}\n`);
  process.exitCode = error instanceof ConfigError ? 2 : 1;
}
