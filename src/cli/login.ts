import { text } from 'node:stream/consumers';
import { Command } from 'commander';
import { createClient } from '../client/index.ts';
import { CliError, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { httpFetch } from './http-fetch.ts';
import { configPath, effectiveLogin, saveLogin } from './session.ts';

/** `baton login` and `baton whoami`. */
export function loginCommands(run: Run): Command[] {
  const login = new Command('login')
    .description('check a server URL and token with whoami, then keep them in your config file (mode 0600)')
    .option('--url <url>', 'the Baton server, e.g. https://baton.example.com (default: BATON_URL)')
    .option('--token <token>', 'your token, bat_… (default: BATON_TOKEN, else one line read from stdin)')
    .action(
      run(async (ctx, o: { url?: string; token?: string }) => {
        const url = o.url ?? ctx.env.BATON_URL;
        const token = o.token ?? ctx.env.BATON_TOKEN ?? (process.stdin.isTTY ? undefined : await firstLine());
        if (!url || !token) throw new CliError('baton login needs --url and --token (or BATON_URL and BATON_TOKEN, or the token on stdin).', EXIT.usage);
        const me = await createClient({ baseUrl: url, token, fetch: httpFetch }).whoami({});
        const path = configPath(ctx.env);
        await saveLogin(path, { url, token });
        if (ctx.out.json) return ctx.out.data(me);
        ctx.out.line(`Logged in to ${url} as ${me.principal.name} (${me.principal.kind} ${me.principal.id}); saved in ${path}`);
      }),
    );

  const whoami = new Command('whoami').description('who the token in use belongs to, and what it may do').action(
    run(async (ctx) => {
      const { url, client } = await ctx.connect();
      const me = await client.whoami({});
      if (ctx.out.json) return ctx.out.data(me);
      const source = effectiveLogin(ctx.env, {}).token ? 'BATON_TOKEN' : configPath(ctx.env);
      ctx.out.line(`${me.principal.name} (${me.principal.kind} ${me.principal.id}) at ${url}, token from ${source}`);
      ctx.out.line(`scopes: ${me.scopes.join(', ')}`);
    }),
  );

  return [login, whoami];
}

async function firstLine(): Promise<string | undefined> {
  return (await text(process.stdin)).split('\n')[0]?.trim() || undefined;
}
