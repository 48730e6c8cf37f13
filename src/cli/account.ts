import { rm } from 'node:fs/promises';
import { Command } from 'commander';
import type { Run } from './context.ts';
import { nameOf, principalNames } from './names.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';
import { configPath, effectiveLogin, readLogin } from './session.ts';

/** `baton auth status` and `baton logout`: the login this command line uses. */
export function accountCommands(run: Run): Command[] {
  const auth = new Command('auth').description('the login this command line uses');
  auth
    .command('status')
    .description('which server and token are in use, where they come from, and whether the server accepts the token (exit 3 if not)')
    .action(
      run(async (ctx) => {
        const path = configPath(ctx.env);
        const saved = await readLogin(path);
        const from = { url: ctx.env.BATON_URL ? 'BATON_URL' : path, token: ctx.env.BATON_TOKEN ? 'BATON_TOKEN' : path };
        const { url, client } = await ctx.connect();
        const me = await client.whoami({});
        if (ctx.out.json) return ctx.out.data({ url, url_from: from.url, token_from: from.token, saved: saved.token !== undefined, ...me });
        ctx.out.line(`Logged in to ${url} (from ${from.url}) as ${me.principal.name} (${me.principal.kind} ${me.principal.id})`);
        ctx.out.line(`token ${me.token.id} on ${me.token.machine} (from ${from.token}); scopes: ${me.scopes.join(', ')}`);
      }),
    );

  const logout = new Command('logout').description('forget the saved login (the config file); BATON_URL and BATON_TOKEN, when set, still apply').action(
    run(async (ctx) => {
      const path = configPath(ctx.env);
      const saved = await readLogin(path);
      await rm(path, { force: true });
      const still = effectiveLogin(ctx.env, {}).token ? ' BATON_TOKEN is still set in this shell and still used.' : '';
      if (ctx.out.json) return ctx.out.data({ logged_out: saved.token !== undefined, config: path, env_token: still !== '' });
      ctx.out.note(saved.token === undefined ? `No saved login in ${path}.${still}` : `Logged out: removed ${path}.${still}`);
    }),
  );
  return [auth, logout];
}

/** `baton tokens list`: a principal's tokens (yours by default), never the secrets. */
export function tokensListCommand(run: Run): Command {
  return withPaging(
    new Command('list')
      .description("list a principal's tokens (metadata only; the token itself is never shown again)")
      .argument('[agent-id]', 'the principal (agt_…); default: you'),
  ).action(
    run(async (ctx, agentId: string | undefined, o: PagingOptions) => {
      const { client } = await ctx.connect();
      const id = agentId ?? (await client.whoami({})).principal.id;
      const page = await readPages(o, (p) => client.tokens.list({ id, ...p }));
      const names = await principalNames(client, page.data.map((t) => t.created_by.id));
      printPage(ctx, page, (rows) =>
        ctx.out.table(
          ['ID', 'MACHINE', 'PREFIX', 'SCOPES', 'LAST USED', 'EXPIRES', 'REVOKED', 'CREATED BY'],
          rows.map((t) => [t.id, t.machine, t.prefix, t.scopes.join(','), t.last_used_at ?? '', t.expires_at ?? '', t.revoked_at ?? '', nameOf(names, t.created_by.id)]),
        ),
      );
      if (!ctx.out.json && page.data.length === 0) ctx.out.note(`${id} has no tokens.`);
    }),
  );
}
