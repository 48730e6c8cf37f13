import { Command, Option } from 'commander';
import type { InputOf, OutputOf } from '../client/index.ts';
import { EVENT_TYPES, type EventType } from '../domain/event-types.ts';
import { CliError, collect, type Context, idempotencyOption, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';

type Webhook = OutputOf<'webhooks_get'>;
type Approval = OutputOf<'approvals_get'>;

/**
 * `baton webhooks …`: the subscriptions that POST events to a URL (spec/realtime.md, "Webhooks"),
 * and their delivery log. The signing secret is printed once, by `create` and `rotate-secret`. An
 * agent's outward-facing change waits for a human's approval: the command then says which.
 */
export function webhooksCommand(run: Run): Command {
  const webhooks = new Command('webhooks').description('send events to a URL, signed: subscribe, list, see deliveries, replay, rotate the secret');
  webhooks
    .command('create')
    .description('subscribe a URL to events; prints the signing secret, once')
    .argument('<url>', 'where events are POSTed (https, public addresses)')
    .option('--event <type>', 'only these event types (repeatable, or comma-separated); default every type', collect)
    .option('--disabled', 'create it disabled: nothing is delivered until it is enabled')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, url: string, o: { event?: string[]; disabled?: boolean; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const created = await client.webhooks.create({ url, ...eventTypes(o.event), ...(o.disabled ? { enabled: false } : {}) }, ctx.write(o));
        if (awaitsApproval(ctx, created)) return;
        if (ctx.out.json) return ctx.out.data(created);
        ctx.out.line(`${created.id}  ${created.url}`);
        ctx.out.line(`secret ${created.secret ?? ''}`);
        ctx.out.note('Keep the secret now: it is not shown again (baton webhooks rotate-secret issues a new one).');
      }),
    );

  withPaging(webhooks.command('list').description('your webhooks (everyone’s with agents:admin), oldest first'), 25).action(
    run(async (ctx, o: PagingOptions) => {
      const { client } = await ctx.connect();
      const page = await readPages(o, (p) => client.webhooks.list(p));
      printPage(ctx, page, (rows) => ctx.out.table(['WEBHOOK', 'URL', 'EVENTS', 'STATE'], rows.map((w) => [w.id, w.url, (w.event_types ?? ['every type']).join(', '), stateOf(w)])));
    }),
  );

  webhooks
    .command('show')
    .description('one webhook: URL, event types, and why the server disabled it if it did')
    .argument('<id>', 'the webhook (whk_…)')
    .action(
      run(async (ctx, id: string) => {
        const { client } = await ctx.connect();
        const webhook = await client.webhooks.get({ id });
        if (ctx.out.json) return ctx.out.data(webhook);
        ctx.out.line(`${webhook.id}  ${webhook.url}  ${stateOf(webhook)}`);
        ctx.out.line(`events: ${(webhook.event_types ?? ['every type']).join(', ')}`);
        ctx.out.line(`created ${webhook.created_at} by ${webhook.created_by.id}; version ${webhook.version}`);
      }),
    );

  webhooks
    .command('update')
    .description('change the URL or event types, or enable or disable it (enabling delivers from now on; replay reaches back)')
    .argument('<id>', 'the webhook (whk_…)')
    .option('--url <url>', 'a new URL')
    .option('--event <type>', 'the event types, replacing the old ones (repeatable); all for every type', collect)
    .addOption(new Option('--enable', 'deliver again').conflicts('disable'))
    .option('--disable', 'stop delivering')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { url?: string; event?: string[]; enable?: boolean; disable?: boolean; idempotencyKey?: string }) => {
        const changes = { ...(o.url ? { url: o.url } : {}), ...eventTypes(o.event), ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}) };
        if (Object.keys(changes).length === 0) throw new CliError('nothing to change: give --url, --event, --enable or --disable', EXIT.usage);
        const { client } = await ctx.connect();
        const { version } = await client.webhooks.get({ id });
        const updated = await client.webhooks.update({ id, ...changes }, ctx.write(o, { ifMatch: version }));
        if (awaitsApproval(ctx, updated)) return;
        if (ctx.out.json) return ctx.out.data(updated);
        ctx.out.note(`updated ${updated.id}: ${updated.url}, ${stateOf(updated)}`);
      }),
    );

  webhooks
    .command('delete')
    .description('stop and remove a webhook (its delivery log is kept)')
    .argument('<id>', 'the webhook (whk_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const deleted = await client.webhooks.delete({ id }, ctx.write(o));
        if (awaitsApproval(ctx, deleted)) return;
        if (ctx.out.json) return ctx.out.data(deleted);
        ctx.out.note(`deleted ${deleted.id} (${deleted.url})`);
      }),
    );

  withPaging(webhooks.command('deliveries').description("a webhook's delivery log, newest event first, with each attempt's outcome").argument('<id>', 'the webhook (whk_…)'), 25).action(
    run(async (ctx, id: string, o: PagingOptions) => {
      const { client } = await ctx.connect();
      const page = await readPages(o, (p) => client.webhooks.deliveries({ id, ...p }));
      printPage(ctx, page, (rows) =>
        ctx.out.table(
          ['EVENT', 'STATE', 'ATTEMPTS', 'LAST', 'NEXT'],
          rows.map((d) => {
            const last = d.attempts.at(-1);
            return [d.event_id, d.state, String(d.attempts.length), last ? `${last.status ?? '-'} ${last.error ?? ''}`.trim() : '', d.next_attempt_at ?? ''];
          }),
        ),
      );
    }),
  );

  webhooks
    .command('replay')
    .description('send again what a webhook missed: every matching event after --since it has not received')
    .argument('<id>', 'the webhook (whk_…)')
    .requiredOption('--since <event>', 'an event id (evt_…): replay what came after it')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { since: string; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const replayed = await client.webhooks.replay({ id, since: o.since }, ctx.write(o));
        if (awaitsApproval(ctx, replayed)) return;
        if (ctx.out.json) return ctx.out.data(replayed);
        ctx.out.note(`queued ${replayed.queued} deliveries${replayed.has_more ? `; more follow: baton webhooks replay ${id} --since ${replayed.through}` : ''}`);
      }),
    );

  webhooks
    .command('rotate-secret')
    .description('issue a new signing secret, printed once; the old one stops verifying at once')
    .argument('<id>', 'the webhook (whk_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const rotated = await client.webhooks.rotateSecret({ id }, ctx.write(o));
        if (awaitsApproval(ctx, rotated)) return;
        if (ctx.out.json) return ctx.out.data(rotated);
        ctx.out.line(`secret ${rotated.secret ?? ''}`);
        ctx.out.note(`${rotated.id}: deliveries are signed with this secret from now on`);
      }),
    );
  return webhooks;
}

/** `--event`: the types named (checked here, so a typo is a usage error), or every type (`all`, or the option left out on create). */
function eventTypes(given: string[] | undefined): Pick<InputOf<'webhooks_create'>, 'event_types'> {
  if (given === undefined) return {};
  if (given.length === 1 && given[0] === 'all') return { event_types: null };
  const unknown = given.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) throw new CliError(`unknown event type ${unknown.join(', ')}: the types are ${EVENT_TYPES.join(', ')}`, EXIT.usage);
  return { event_types: given as EventType[] };
}

function stateOf(w: Webhook): string {
  return w.enabled ? 'enabled' : `disabled${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`;
}

/**
 * When the server answered 202 with the approval it waits for instead of the change (an agent's
 * outward-facing write waits for a human), says so and answers true; the caller's answer is then
 * known to be the change itself.
 */
function awaitsApproval(ctx: Context, answer: object): answer is Approval {
  if (!('operation' in answer)) return false;
  const approval = answer as Approval;
  if (ctx.out.json) ctx.out.data(approval);
  else ctx.out.note(`waiting for a human's approval: ${approval.id} (baton approvals list; they decide with baton approvals approve ${approval.id})`);
  return true;
}
