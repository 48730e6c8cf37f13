import { Command, CommanderError } from 'commander';
import { BatonProblem } from '../client/index.ts';
import { ConfigError } from '../config.ts';
import { StartupError } from '../startup-error.ts';
import { readVersion } from '../version.ts';
import { adminCommands } from './admin.ts';
import { type Context, CliError, createContext } from './context.ts';
import { connectionReason, EXIT, exitCodeOf, isConnectionError } from './exit-codes.ts';
import { loginCommands } from './login.ts';
import { serverCommands } from './server-commands.ts';
import { tasksCommand } from './tasks.ts';

/**
 * `baton`: the command line for people and agents (the REST API through baton/client) and for
 * operators (serving, migrations, recovery, backups). Every failure is one line on stderr, the hint
 * included, and a documented exit code (exit-codes.ts).
 */
function program(env: Record<string, string | undefined>, version: string): Command {
  const root = new Command('baton')
    .description('Baton: task coordination for humans and software agents')
    .version(version, '-V, --version', 'print the version of Baton and exit')
    .option('--json', 'print JSON instead of tables and messages (on every command)')
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();

  /** Wraps an action: builds its context, and turns what it throws into one line and an exit code. */
  const run =
    (action: (ctx: Context, ...args: never[]) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args.at(-1) as Command;
      const ctx = createContext(command, env);
      try {
        await action(ctx, ...(args.slice(0, -1) as never[]));
      } catch (error) {
        process.stderr.write(`${describe(error, ctx)}\n`);
        process.exitCode = error instanceof CliError ? error.exitCode : error instanceof ConfigError ? EXIT.usage : exitCodeOf(error);
      }
    };

  for (const command of [...loginCommands(run), tasksCommand(run), ...adminCommands(run), ...serverCommands(run)]) root.addCommand(command);
  // Every subcommand reports usage errors like the root: a message, a hint, exit 2.
  const configure = (command: Command) => {
    command.exitOverride().showHelpAfterError('(add --help for usage)').configureHelp({ showGlobalOptions: true });
    command.commands.forEach(configure);
  };
  root.commands.forEach(configure);
  return root;
}

/** One line: what went wrong, then what to do (the problem's hint). */
function describe(error: unknown, ctx: Context): string {
  if (error instanceof BatonProblem) {
    const hint = error.hint ? ` Hint: ${error.hint}` : '';
    return `error: ${error.message.replace(/\.$/, '')} (${error.code}, HTTP ${error.status}).${hint}`;
  }
  if (isConnectionError(error)) {
    const where = ctx.env.BATON_URL ? 'BATON_URL' : 'the URL given to baton login';
    return `error: cannot reach the Baton server: ${connectionReason(error)}. Is it running? Check ${where}.`;
  }
  if (error instanceof ConfigError || error instanceof StartupError) return error.message;
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}

try {
  await program(process.env, readVersion()).parseAsync(process.argv);
} catch (error) {
  // Commander already printed its message (unknown command, missing argument) or the help.
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  else {
    process.stderr.write(`${error instanceof ConfigError || error instanceof StartupError ? error.message : `error: ${error instanceof Error ? error.message : String(error)}`}\n`);
    process.exitCode = error instanceof ConfigError ? EXIT.usage : EXIT.failed;
  }
}
