import type { Command } from 'commander';
import type { Run } from './context.ts';

/** A module of the command line and the top-level commands it defines, by name. */
interface CommandModule {
  readonly names: readonly string[];
  load(run: Run): Promise<Command[]>;
}

/**
 * Every top-level command, by the module that defines it, in the order `baton --help` lists them.
 * Agents and scripts start `baton` once per command, so a command line loads only the module of the
 * command it names (and what that module imports): `baton tasks list` loads neither the admin
 * commands nor the git guard's glob matcher (bench/cli-startup.ts). commands.test.ts holds each
 * entry's names equal to what its module defines.
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { names: ['login', 'whoami'], load: async (run) => (await import('./login.ts')).loginCommands(run) },
  { names: ['auth', 'logout'], load: async (run) => (await import('./account.ts')).accountCommands(run) },
  { names: ['tasks'], load: async (run) => [(await import('./tasks.ts')).tasksCommand(run)] },
  { names: ['templates'], load: async (run) => [(await import('./templates.ts')).templatesCommand(run)] },
  { names: ['schedules'], load: async (run) => [(await import('./schedules.ts')).schedulesCommand(run)] },
  { names: ['wait', 'inbox', 'answer'], load: async (run) => (await import('./inbox.ts')).inboxCommands(run) },
  { names: ['asks'], load: async (run) => [(await import('./asks.ts')).asksCommand(run)] },
  { names: ['reservations'], load: async (run) => [(await import('./reservations.ts')).reservationsCommand(run)] },
  { names: ['artifacts'], load: async (run) => [(await import('./artifacts.ts')).artifactsCommand(run)] },
  { names: ['runs'], load: async (run) => [(await import('./runs.ts')).runsCommand(run)] },
  { names: ['guard'], load: async (run) => [(await import('./guard.ts')).guardCommand(run)] },
  { names: ['stats'], load: async (run) => [(await import('./stats.ts')).statsCommand(run)] },
  { names: ['export'], load: async (run) => [(await import('./export.ts')).exportCommand(run)] },
  { names: ['webhooks'], load: async (run) => [(await import('./webhooks.ts')).webhooksCommand(run)] },
  {
    names: ['agents', 'tokens', 'workspaces', 'approvals', 'budgets'],
    load: async (run) => {
      const [{ adminCommands }, { tokensListCommand }] = await Promise.all([import('./admin.ts'), import('./account.ts')]);
      const admin = adminCommands(run);
      // `tokens list` lives beside the login commands that share its needs; the rest of `tokens` is admin.ts's.
      admin.find((command) => command.name() === 'tokens')?.addCommand(tokensListCommand(run));
      return admin;
    },
  },
  {
    names: ['serve', 'migrate', 'token', 'mcp', 'admin-token', 'backup', 'restore', 'archive-events'],
    load: async (run) => (await import('./server-commands.ts')).serverCommands(run),
  },
];

/**
 * The top-level commands `argv` needs: those of the module defining the command it names (its first
 * word that is not an option; the program's own options take no value), or every one when it names
 * none of them (help, `completion`, a mistyped command, which Commander then answers with the
 * nearest name).
 */
export async function commandsFor(argv: readonly string[], run: Run): Promise<Command[]> {
  const name = argv.find((arg) => !arg.startsWith('-'));
  const named = COMMAND_MODULES.find((module) => name !== undefined && module.names.includes(name));
  const modules = named ? [named] : COMMAND_MODULES;
  return (await Promise.all(modules.map((module) => module.load(run)))).flat();
}
