import { Command, Option } from 'commander';
import type { OutputOf } from '../client/index.ts';
import type { SCOPES } from '../domain/scopes.ts';
import { APPROVAL_STATUSES } from '../domain/approval-status.ts';
import { BUDGET_PERIODS, BUDGET_UNITS } from '../domain/budget-window.ts';
import { agentsCommand } from './agents.ts';
import { CliError, collect, type Context, duration, idempotencyOption, integer, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { nameOf, principalNames, taskTitles } from './names.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';


/** `baton agents …`, `baton tokens …`, `baton workspaces …`, `baton approvals …`, `baton budgets …`: administration through the REST API. */
export function adminCommands(run: Run): Command[] {
  const workspaces = new Command('workspaces').description('the workspaces you belong to: each holds its own tasks, agents and tokens');
  workspaces
    .command('list')
    .description('list your workspaces; CURRENT marks the one this token acts in')
    .action(
      run(async (ctx) => {
        const { client } = await ctx.connect();
        const page = await client.workspaces.list({});
        if (ctx.out.json) return ctx.out.data(page);
        ctx.out.table(['ID', 'NAME', 'CURRENT', 'CREATED'], page.data.map((w) => [w.id, w.name, w.current ? 'yes' : '', w.created_at]));
      }),
    );
  workspaces
    .command('create')
    .description('create a workspace with you as its owner (owners only); a token of its owner is printed once')
    .argument('<name>', 'unique on the server')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, name: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const made = await client.workspaces.create({ name }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(made);
        ctx.out.line(`created workspace ${made.workspace.id} (${made.workspace.name}); you are its owner ${made.owner_id}`);
        if (made.token === null) {
          ctx.out.note('Sign in with single sign-on and switch to it in the web app, or use a token of its owner: this answer carries none (single sign-on, or a replay).');
          return;
        }
        ctx.out.note(`Warning: this token is its owner's, every right in ${made.workspace.name}, shown once; store it now (\`BATON_TOKEN\` or \`baton login\`):`);
        ctx.out.line(made.token);
      }),
    );

  workspaces
    .command('settings')
    .description("your workspace's settings: its own (default: the server's) and those in force")
    .action(
      run(async (ctx) => {
        const { client } = await ctx.connect();
        printSettings(ctx, await client.workspaces.get({}));
      }),
    );
  workspaces
    .command('update')
    .description("change your workspace's settings (admins); `default` puts one back to the server's")
    .addOption(new Option('--escalate-ask <duration>', 'how long an ask waits before it escalates, e.g. 4h').argParser(orDefault(duration('--escalate-ask'))))
    .addOption(new Option('--escalate-approval <duration>', 'how long an approval waits before it escalates').argParser(orDefault(duration('--escalate-approval'))))
    .addOption(new Option('--escalate-review <duration>', 'how long a review waits before it escalates').argParser(orDefault(duration('--escalate-review'))))
    .addOption(new Option('--escalate-to <targets>', 'who is told when something escalates: names or ids, role:<role>, comma-separated').argParser(orDefault((v) => collect(v, undefined))))
    .addOption(new Option('--rate-limit <requests>', "requests a minute the workspace's tokens share").argParser(orDefault(integer('--rate-limit'))))
    .addOption(new Option('--chat-webhook-url <url>', 'the incoming-webhook URL of the channel notifications are posted to').argParser(orDefault((v) => v)))
    .addOption(new Option('--event-retention-days <days>', 'days events are kept').argParser(orDefault(integer('--event-retention-days'))))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, o: SettingsOptions & { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const input = {
          ...(o.escalateAsk === undefined ? {} : { escalate_ask_s: sent(o.escalateAsk) }),
          ...(o.escalateApproval === undefined ? {} : { escalate_approval_s: sent(o.escalateApproval) }),
          ...(o.escalateReview === undefined ? {} : { escalate_review_s: sent(o.escalateReview) }),
          ...(o.escalateTo === undefined ? {} : { escalate_to: sent(o.escalateTo) }),
          ...(o.rateLimit === undefined ? {} : { rate_limit: sent(o.rateLimit) }),
          ...(o.chatWebhookUrl === undefined ? {} : { chat_webhook_url: sent(o.chatWebhookUrl) }),
          ...(o.eventRetentionDays === undefined ? {} : { event_retention_days: sent(o.eventRetentionDays) }),
        };
        if (Object.keys(input).length === 0) throw new CliError('Name at least one setting to change (baton workspaces update --help lists them).', EXIT.usage);
        printSettings(ctx, await client.workspaces.update(input, ctx.write(o)));
      }),
    );

  const tokens = new Command('tokens').description('bearer tokens of a principal');
  tokens
    .command('create')
    .description('issue a token for a principal; it is printed once')
    .argument('<agent-id>', 'the principal (agt_…)')
    .requiredOption('--machine <label>', 'where the token will live, e.g. ci-runner-1 (unique per principal)')
    .option('--scope <scope>', 'narrow it to these scopes (repeatable; default: all of the principal’s)', collect)
    .option('--expires-in <seconds>', 'lifetime; default: no expiry', integer('--expires-in'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, agentId: string, o: { machine: string; scope?: string[]; expiresIn?: number; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const token = await client.tokens.create(
          { id: agentId, machine: o.machine, ...(o.scope ? { scopes: o.scope as (typeof SCOPES)[number][] } : {}), ...(o.expiresIn === undefined ? {} : { expires_in_s: o.expiresIn }) },
          ctx.write(o),
        );
        if (ctx.out.json) return ctx.out.data(token);
        ctx.out.note(`token ${token.id} for ${token.agent_id} on ${token.machine} (shown once; store it now):`);
        ctx.out.line(token.token ?? '(not shown: this answer is a replay of an earlier request with the same idempotency key)');
      }),
    );
  tokens
    .command('rotate')
    .description('replace a token without downtime: a new one for the same principal, machine and scopes, printed once; the old one stops after --grace')
    .argument('<token-id>', 'the token to replace (tok_…)')
    .option('--grace <duration>', 'how long the old token keeps working, e.g. 10m (default: it stops now)', duration('--grace'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { grace?: number; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const token = await client.tokens.rotate({ id, ...(o.grace === undefined ? {} : { grace_s: o.grace }) }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(token);
        const until = token.replaced.revoked_at ?? 'now';
        ctx.out.note(`token ${token.id} replaces ${token.replaced.id} on ${token.machine}; the old one works until ${until} (shown once; store it now):`);
        ctx.out.line(token.token ?? '(not shown: this answer is a replay of an earlier request with the same idempotency key)');
      }),
    );
  tokens
    .command('revoke')
    .description('revoke a token at once')
    .argument('<token-id>', 'the token (tok_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const token = await client.tokens.revoke({ id }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(token);
        ctx.out.line(`revoked ${token.id} (${token.machine})`);
      }),
    );

  const approvals = new Command('approvals').description('gated operations waiting for a human');
  withPaging(approvals.command('list').description('list approvals').addOption(new Option('--status <status>', 'only this status').choices(APPROVAL_STATUSES))).action(
    run(async (ctx, o: PagingOptions & { status?: (typeof APPROVAL_STATUSES)[number] }) => {
      const { client } = await ctx.connect();
      const page = await readPages(o, (p) => client.approvals.list({ ...p, ...(o.status ? { status: o.status } : {}) }));
      const [names, titles] = await Promise.all([principalNames(client, page.data.map((a) => a.requested_by.id)), taskTitles(client, page.data.flatMap((a) => (a.target ? [a.target.id] : [])))]);
      printPage(ctx, page, (rows) =>
        ctx.out.table(
          ['ID', 'STATUS', 'OPERATION', 'TARGET', 'REQUESTED BY', 'EXPIRES'],
          rows.map((a) => [a.id, a.status, a.operation, a.target ? (titles.get(a.target.id) ?? a.target.id) : '', nameOf(names, a.requested_by.id), a.expires_at]),
        ),
      );
    }),
  );
  for (const verdict of ['approve', 'deny'] as const) {
    const command = approvals
      .command(verdict)
      .description(verdict === 'approve' ? 'approve: the operation runs now, as its requester' : 'deny: the operation never runs')
      .argument('<id>', 'the approval (apr_…)')
      .addOption(idempotencyOption());
    if (verdict === 'deny') command.option('--reason <text>', 'why, for the requester');
    command.action(
      run(async (ctx, id: string, o: { reason?: string; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const approval = verdict === 'approve' ? await client.approvals.approve({ id }, ctx.write(o)) : await client.approvals.deny({ id, ...(o.reason ? { reason: o.reason } : {}) }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(approval);
        ctx.out.line(`${approval.id} is ${approval.status}${approval.result ? ` (the operation answered ${approval.result.status})` : ''}`);
      }),
    );
  }
  return [agentsCommand(run), tokens, workspaces, approvals, budgetsCommand(run)];
}

const BUDGET_SCOPES = ['agent', 'label', 'task', 'workspace'] as const;
const amount = (b: { unit: string; currency: string | null }, n: number) => (b.unit === 'cost' ? `${n} ${b.currency ?? ''}`.trim() : String(n));

/** `baton budgets list|create|raise|delete`: caps on what runs spend (spec/runs.md, "Budgets"). */
function budgetsCommand(run: Run): Command {
  const budgets = new Command('budgets').description('caps on what runs spend, per workspace, agent, label or task');
  withPaging(budgets.command('list').description('list budgets with what their window spent').addOption(new Option('--applies-to <what>', 'only agent, label, task or workspace budgets').choices(BUDGET_SCOPES))).action(
    run(async (ctx, o: PagingOptions & { appliesTo?: (typeof BUDGET_SCOPES)[number] }) => {
      const { client } = await ctx.connect();
      const page = await readPages(o, (p) => client.budgets.list({ ...p, ...(o.appliesTo ? { applies_to: o.appliesTo } : {}) }));
      printPage(ctx, page, (rows) =>
        ctx.out.table(
          ['ID', 'NAME', 'APPLIES TO', 'PERIOD', 'SPENT', 'LIMIT', 'STATE', 'RESETS'],
          rows.map((b) => [b.id, b.name, `${b.applies_to} ${b.target}`, b.period, amount(b, b.spent), amount(b, b.limit), b.state, b.resets_at ?? 'never']),
        ),
      );
    }),
  );
  budgets
    .command('create')
    .description('set a budget (humans with the admin or owner role)')
    .argument('<name>', 'what it is for')
    .addOption(new Option('--applies-to <what>', 'what spends from it').choices(BUDGET_SCOPES).makeOptionMandatory())
    .option('--target <id-or-label>', 'the agent id, label or task id (none for workspace)')
    .addOption(new Option('--unit <unit>', 'what it counts').choices(BUDGET_UNITS).makeOptionMandatory())
    .requiredOption('--limit <amount>', 'the most a window may spend', Number)
    .addOption(new Option('--period <period>', 'the window (UTC calendar); default month, lifetime for a task').choices(BUDGET_PERIODS))
    .option('--currency <code>', 'for --unit cost (default USD)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, name: string, o: { appliesTo: (typeof BUDGET_SCOPES)[number]; target?: string; unit: (typeof BUDGET_UNITS)[number]; limit: number; period?: (typeof BUDGET_PERIODS)[number]; currency?: string; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const b = await client.budgets.create(
          { name, applies_to: o.appliesTo, ...(o.target ? { target: o.target } : {}), unit: o.unit, limit: o.limit, ...(o.period ? { period: o.period } : {}), ...(o.currency ? { currency: o.currency } : {}) },
          ctx.write(o),
        );
        if (ctx.out.json) return ctx.out.data(b);
        ctx.out.line(`created budget ${b.id}: ${b.applies_to} ${b.target}, ${amount(b, b.limit)} ${b.unit === 'cost' ? '' : `${b.unit} `}per ${b.period}`);
      }),
    );
  budgets
    .command('raise')
    .description('change a budget’s limit, or forgive what its window spent (humans with the admin or owner role)')
    .argument('<id>', 'the budget (bdg_…)')
    .option('--limit <amount>', 'the new limit', Number)
    .option('--spent <amount>', 'set what the current window spent, e.g. 0', Number)
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { limit?: number; spent?: number; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const b = await client.budgets.update({ id, ...(o.limit === undefined ? {} : { limit: o.limit }), ...(o.spent === undefined ? {} : { spent: o.spent }) }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(b);
        ctx.out.line(`${b.id}: spent ${amount(b, b.spent)} of ${amount(b, b.limit)} (${b.state})`);
      }),
    );
  budgets
    .command('delete')
    .description('delete a budget: it refuses nothing any more')
    .argument('<id>', 'the budget (bdg_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const b = await client.budgets.delete({ id }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(b);
        ctx.out.line(`deleted budget ${b.id} (${b.name})`);
      }),
    );
  return budgets;
}

/** `default` (or `none`) for an option whose null puts the server's default back; anything else through `parse`. */
function orDefault<T>(parse: (value: string) => T): (value: string) => T | typeof DEFAULT {
  // Commander turns a parser's null into an empty string: the choice travels as DEFAULT until the request is built.
  return (value) => (value === 'default' || value === 'none' ? DEFAULT : parse(value));
}

const DEFAULT = 'default' as const;

/** The value to send: null where the option said `default`. */
function sent<T>(value: T | typeof DEFAULT): T | null {
  return value === DEFAULT ? null : value;
}

type Setting<T> = T | typeof DEFAULT;

interface SettingsOptions {
  escalateAsk?: Setting<number>;
  escalateApproval?: Setting<number>;
  escalateReview?: Setting<number>;
  escalateTo?: Setting<string[]>;
  rateLimit?: Setting<number>;
  chatWebhookUrl?: string;
  eventRetentionDays?: Setting<number>;
}

type WorkspaceSettings = OutputOf<'workspaces_get'>;

/** Each setting with the workspace's own value (`default`: none of its own) and the one in force. */
function printSettings(ctx: Context, answer: WorkspaceSettings): void {
  if (ctx.out.json) return ctx.out.data(answer);
  const shown = (value: string | number | string[] | null | undefined) => (value === null || value === undefined ? '' : Array.isArray(value) ? value.join(',') : String(value));
  const names = Object.keys(answer.effective) as (keyof WorkspaceSettings['effective'])[];
  ctx.out.table(
    ['SETTING', 'OWN', 'IN FORCE'],
    names.map((name) => [name, answer.settings[name] === null || answer.settings[name] === undefined ? 'default' : shown(answer.settings[name]), shown(answer.effective[name]) || 'none']),
  );
}
