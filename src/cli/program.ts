import { Command, CommanderError } from 'commander';
import { BatonProblem } from '../client/index.ts';
import { ConfigError, StartupError } from '../startup-error.ts';
import { readVersion } from '../version.ts';
import { cliHint } from './hints.ts';
import { commandsFor } from './commands.ts';
import { completionCommand } from './completion.ts';
import { type Context, CliError, createContext } from './context.ts';
import { connectionReason, EXIT, type ExitCode, exitCodeOf, isConnectionError } from './exit-codes.ts';

/**
 * `baton`: the command line for people and agents (the REST API through the typed client (src/client/, published as baton-tasks-client)) and for
 * operators (serving, migrations, recovery, backups). Every failure is one line on stderr, the hint
 * included, and a documented exit code (exit-codes.ts). Only the commands `argv` needs are loaded (commands.ts).
 */
async function program(env: Record<string, string | undefined>, argv: readonly string[], version: string): Promise<Command> {
  // Known before parsing, so that an error in parsing is JSON too.
  const json = argv.includes('--json');
  const root = new Command('baton')
    .description('Baton: task coordination for humans and software agents')
    .version(version, '-V, --version', 'print the version of Baton and exit')
    .option('--json', 'print JSON instead of tables and messages, errors included (on every command)');

  /** Wraps an action: builds its context, and turns what it throws into one line and an exit code. */
  const run =
    (action: (ctx: Context, ...args: never[]) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args.at(-1) as Command;
      const ctx = createContext(command, env, argv);
      try {
        await action(ctx, ...(args.slice(0, -1) as never[]));
      } catch (error) {
        const code = error instanceof CliError ? error.exitCode : error instanceof ConfigError ? EXIT.usage : exitCodeOf(error);
        process.stderr.write(`${ctx.out.json ? JSON.stringify(problemDocument(error, describe(error, ctx), code)) : describe(error, ctx)}\n`);
        process.exitCode = code;
      }
    };

  for (const command of [...(await commandsFor(argv, run)), completionCommand(root)]) root.addCommand(command);
  // Every command reports usage errors alike: a message and a hint (a JSON document under --json), exit 2.
  const configure = (command: Command) => {
    command.exitOverride().configureHelp({ showGlobalOptions: true });
    if (json) command.configureOutput({ outputError: (message, write) => write(`${JSON.stringify(problemDocument(undefined, message.trim(), EXIT.usage))}\n`) });
    else command.showHelpAfterError('(add --help for usage)');
    command.commands.forEach(configure);
  };
  configure(root);
  return root;
}

const CODE_OF_EXIT: Record<ExitCode, string> = { 0: 'ok', 1: 'failed', 2: 'usage', 3: 'auth', 4: 'not_found', 5: 'conflict', 6: 'invalid', 7: 'unavailable', 8: 'idle' };

/**
 * A failure under --json: the server's problem document as it came (with `status`), or for a
 * failure of the command line itself one shaped like it; both say the `exit_code`.
 */
function problemDocument(error: unknown, line: string, exitCode: ExitCode): Record<string, unknown> {
  if (error instanceof BatonProblem) return { ...error.problem, status: error.status, code: error.code, retryable: error.retryable, exit_code: exitCode };
  const code = isConnectionError(error) ? 'unreachable' : CODE_OF_EXIT[exitCode];
  return { code, detail: line.replace(/^error: /, ''), retryable: exitCode === EXIT.unavailable, exit_code: exitCode };
}

/** One line: what went wrong, then what to do (the problem's hint). */
function describe(error: unknown, ctx: Context): string {
  if (error instanceof BatonProblem) {
    const hint = error.hint ? ` Hint: ${cliHint(error.hint)}` : '';
    return `error: ${error.message.replace(/\.$/, '')} (${error.code}, HTTP ${error.status}).${hint}`;
  }
  if (isConnectionError(error)) {
    const where = ctx.env.BATON_URL ? 'BATON_URL' : 'the URL given to baton login';
    return `error: cannot reach the Baton server: ${connectionReason(error)}. Is it running? Check ${where}.`;
  }
  if (error instanceof ConfigError || error instanceof StartupError) return error.message;
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}

// A reader that stops early (`baton tasks list | head`) closes the pipe, and what is left to print
// has nowhere to go: stop quietly, as other command-line tools do (it was an EPIPE stack trace).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(EXIT.ok);
});

const argv = process.argv.slice(2);
try {
  await (await program(process.env, argv, readVersion())).parseAsync(process.argv);
} catch (error) {
  // Commander already printed its message (unknown command, missing argument) or the help.
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  else {
    // An option's parser (CliError), the configuration of `baton mcp` (ConfigError): usage errors.
    const code = error instanceof CliError ? error.exitCode : error instanceof ConfigError ? EXIT.usage : EXIT.failed;
    const line = error instanceof ConfigError || error instanceof StartupError ? error.message : `error: ${error instanceof Error ? error.message : String(error)}`;
    process.stderr.write(`${argv.includes('--json') ? JSON.stringify(problemDocument(error, line, code)) : line}\n`);
    process.exitCode = code;
  }
}
