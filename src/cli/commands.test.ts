import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES, commandsFor } from './commands.ts';

const run = () => async () => undefined;

describe('the command table', () => {
  it.each(COMMAND_MODULES.map((module) => [module.names.join(', '), module] as const))('names what its module defines: %s', async (_, module) => {
    expect((await module.load(run)).map((command) => command.name())).toEqual(module.names);
  });

  it('loads the named command’s module only, and every module for help or an unknown command', async () => {
    const names = async (argv: string[]) => (await commandsFor(argv, run)).map((command) => command.name());
    expect(await names(['--json', 'tasks', 'list', '--limit', '5'])).toEqual(['tasks']);
    expect(await names(['tokens', 'list'])).toEqual(['agents', 'tokens', 'workspaces', 'approvals', 'budgets']);
    const every = COMMAND_MODULES.flatMap((module) => module.names);
    expect(await names(['--help'])).toEqual(every);
    expect(await names(['taks', 'list'])).toEqual(every);
  });
});
