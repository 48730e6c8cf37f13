import { Argument, Command, Option } from 'commander';
import { PRINCIPAL_KINDS, SCOPES } from '../domain/scopes.ts';
import { type Role, ROLES } from '../domain/roles.ts';
import { CliError, collect, idempotencyOption, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';

/** `baton agents …`: list and create principals, give a person a role, disable or enable one. */
export function agentsCommand(run: Run): Command {
  const agents = new Command('agents').description('the principals (people and agents) that hold tokens');
  withPaging(agents.command('list').description('list principals').addOption(new Option('--kind <kind>', 'only humans or only agents').choices(PRINCIPAL_KINDS))).action(
    run(async (ctx, o: PagingOptions & { kind?: (typeof PRINCIPAL_KINDS)[number] }) => {
      const { client } = await ctx.connect();
      const page = await readPages(o, (p) => client.agents.list({ ...p, ...(o.kind ? { kind: o.kind } : {}) }));
      printPage(ctx, page, (rows) => ctx.out.table(['ID', 'NAME', 'KIND', 'ROLE', 'SCOPES', 'DISABLED'], rows.map((a) => [a.id, a.name, a.kind, a.role ?? '', a.scopes.join(','), a.disabled ? 'yes' : ''])));
    }),
  );
  withPaging(
    agents
      .command('directory')
      .description("the workspace's people and agents by name (any member may read it)")
      .argument('[ids...]', 'only these principals (agt_…)')
      .option('--prefix <text>', 'only names that begin so (any case; `_` for a space)')
      .addOption(new Option('--kind <kind>', 'only humans or only agents').choices(PRINCIPAL_KINDS)),
  ).action(
    run(async (ctx, ids: string[], o: PagingOptions & { prefix?: string; kind?: (typeof PRINCIPAL_KINDS)[number] }) => {
      const { client } = await ctx.connect();
      const filters = { ...(ids.length > 0 ? { ids } : {}), ...(o.prefix ? { prefix: o.prefix } : {}), ...(o.kind ? { kind: o.kind } : {}) };
      const page = await readPages(o, (p) => client.directory.list({ ...p, ...filters }));
      printPage(ctx, page, (rows) => ctx.out.table(['ID', 'NAME', 'KIND', 'HANDLE', 'DISABLED'], rows.map((e) => [e.id, e.name, e.kind, e.handle ? `@${e.handle}` : '', e.disabled ? 'yes' : ''])));
    }),
  );
  agents
    .command('create')
    .description('create a principal (then give it a token with `baton tokens create`)')
    .argument('<name>', 'a name people recognise')
    .option('--scope <scope>', `a scope it may use (repeatable; required unless --role): ${SCOPES.join(', ')}`, collect)
    .addOption(new Option('--kind <kind>', 'agent or human').choices(PRINCIPAL_KINDS).default('agent'))
    .addOption(new Option('--role <role>', "a human's role, whose scopes it gets in place of --scope").choices(ROLES).conflicts('scope').implies({ kind: 'human' }))
    .addOption(new Option('--email <address>', 'invite the person at this address to sign in').implies({ kind: 'human' }))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, name: string, o: { scope?: string[]; kind: (typeof PRINCIPAL_KINDS)[number]; role?: Role; email?: string; idempotencyKey?: string }) => {
        if (!o.scope && !o.role) throw new CliError('Say what it may do: --scope (repeatable), or for a human --role.', EXIT.usage);
        const { client } = await ctx.connect();
        const input = { name, kind: o.kind, ...(o.scope ? { scopes: o.scope as (typeof SCOPES)[number][] } : {}), ...(o.role ? { role: o.role } : {}), ...(o.email ? { email: o.email } : {}) };
        const agent = await client.agents.create(input, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(agent);
        const role = agent.role ? ` as ${agent.role}` : '';
        ctx.out.line(`created ${agent.kind} ${agent.id} (${agent.name})${role} with ${agent.scopes.join(', ')}`);
        if (agent.kind === 'agent') ctx.out.note(`Next, its token for each machine it runs on: baton tokens create ${agent.id} --machine <name>`);
      }),
    );
  agents
    .command('set-role')
    .description("give a person a role; their scopes become the role's (single sign-on maps a role only at the first sign-in)")
    .argument('<id>', 'the person (agt_…)')
    .addArgument(new Argument('<role>', 'the role').choices(ROLES))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, role: Role, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const agent = await client.agents.setRole({ id, role }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(agent);
        ctx.out.line(`${agent.name} (${agent.id}) is now ${agent.role ?? role}: ${agent.scopes.join(', ')}`);
      }),
    );
  for (const [verb, disabled] of [['disable', true], ['enable', false]] as const) {
    agents
      .command(verb)
      .description(disabled ? 'disable a principal: its tokens and web sessions stop at once, and a person cannot sign in' : 'enable a disabled principal again')
      .argument('<id>', 'the principal (agt_…)')
      .addOption(idempotencyOption())
      .action(
        run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
          const { client } = await ctx.connect();
          const agent = await client.agents.update({ id, disabled }, ctx.write(o));
          if (ctx.out.json) return ctx.out.data(agent);
          ctx.out.line(`${agent.name} (${agent.id}) is ${agent.disabled ? 'disabled' : 'enabled'}`);
        }),
      );
  }
  return agents;
}
