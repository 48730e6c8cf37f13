import { Command, Option } from 'commander';
import type { InputOf, OutputOf } from '../client/index.ts';
import { CliError, collect, type Context, duration, idempotencyOption, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { nameOf, principalNames } from './names.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';
import { resolveTaskId } from './short-ids.ts';

type Reservation = OutputOf<'reservations_get'>;

interface AcquireOptions {
  repo?: string;
  path?: string[];
  resource?: string;
  shared?: boolean;
  ttl?: number;
  task?: string;
  wait?: number;
  idempotencyKey?: string;
}

/**
 * `baton reservations …`: what an agent (or a person) holds so that others keep off it — paths in a
 * repository or a named resource (spec/collaboration.md, "Reservations"); `baton guard` makes git
 * respect them. One taken for a task you hold lives as long as its lease; any other runs out after
 * its TTL unless renewed with `heartbeat`.
 */
export function reservationsCommand(run: Run): Command {
  const reservations = new Command('reservations').description('reserve paths in a repository or a named resource, so others keep off them; list, renew, release');
  reservations
    .command('acquire')
    .description('reserve paths in a repository (--repo with --path) or a named resource (--resource); refused while someone else holds them')
    .option('--repo <key>', 'the repository, as every holder spells it (github.com/acme/api)')
    .option('--path <glob>', 'a glob in --repo, e.g. src/** (repeatable)', collect)
    .option('--resource <name>', 'a named resource instead, e.g. staging-db')
    .option('--shared', 'let others reserve it shared too (default: exclusive)')
    .option('--ttl <duration>', 'how long it lasts unless renewed (default 5m); a reservation for a task you hold lasts as its lease does', duration('--ttl'))
    .option('--task <id>', 'the task it is for (a task you hold: it ends with your lease)')
    .option('--wait <duration>', 'wait this long for others to let go (at most 60s)', duration('--wait'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, o: AcquireOptions) => {
        if (o.resource === undefined && (o.repo === undefined || o.path === undefined)) {
          throw new CliError('give --repo with one or more --path globs, or --resource', EXIT.usage);
        }
        const { client } = await ctx.connect();
        const input: InputOf<'reservations_acquire'> = {
          ...(o.repo ? { repo: o.repo } : {}),
          ...(o.path ? { paths: o.path } : {}),
          ...(o.resource ? { resource: o.resource } : {}),
          ...(o.shared ? { mode: 'shared' as const } : {}),
          ...(o.ttl === undefined ? {} : { ttl_s: o.ttl }),
          ...(o.task ? { task_id: await resolveTaskId(client, o.task) } : {}),
          ...(o.wait === undefined ? {} : { wait_s: o.wait }),
        };
        const held = await client.reservations.acquire(input, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(held);
        ctx.out.line(held.id);
        ctx.out.note(`reserved ${target(held)} (${held.mode}) until ${held.expires_at}${held.task_id ? ` for ${held.task_id}` : ''}`);
      }),
    );

  withPaging(
    reservations
      .command('list')
      .description('active reservations, newest first')
      .option('--repo <key>', 'in this repository')
      .option('--resource <name>', 'of this named resource')
      .option('--holder <who>', 'held by me, or a principal id')
      .option('--task <id>', 'taken for this task')
      .addOption(new Option('--state <state>', 'active (default), or all, ended ones too').choices(['active', 'all'] as const)),
    25,
  ).action(
    run(async (ctx, o: PagingOptions & { repo?: string; resource?: string; holder?: string; task?: string; state?: 'active' | 'all' }) => {
      const { client } = await ctx.connect();
      const filters: InputOf<'reservations_list'> = {
        ...(o.repo ? { repo: o.repo } : {}),
        ...(o.resource ? { resource: o.resource } : {}),
        ...(o.holder ? { holder: o.holder.replace(/^@me$/, 'me') } : {}),
        ...(o.task ? { task_id: await resolveTaskId(client, o.task) } : {}),
        ...(o.state ? { state: o.state } : {}),
      };
      const page = await readPages(o, (p) => client.reservations.list({ ...filters, ...p }));
      const names = await principalNames(client, page.data.map((r) => r.holder.id));
      printPage(ctx, page, (rows) =>
        ctx.out.table(['RESERVATION', 'WHAT', 'MODE', 'HOLDER', 'TASK', 'STATE', 'UNTIL'], rows.map((r) => [r.id, target(r), r.mode, nameOf(names, r.holder.id), r.task_id ?? '', r.state, r.expires_at])),
      );
    }),
  );

  reservations
    .command('heartbeat')
    .description('renew a reservation you hold: it lasts its TTL (or --ttl) from now')
    .argument('<id>', 'the reservation (res_…)')
    .option('--ttl <duration>', 'a new TTL', duration('--ttl'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { ttl?: number; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const { epoch } = await client.reservations.get({ id });
        const renewed = await client.reservations.heartbeat({ id, epoch, ...(o.ttl === undefined ? {} : { ttl_s: o.ttl }) }, ctx.write(o));
        printChanged(ctx, renewed, `renewed ${renewed.id} until ${renewed.expires_at}`);
      }),
    );

  reservations
    .command('release')
    .description('let go of a reservation you hold, so others may take it at once')
    .argument('<id>', 'the reservation (res_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const { epoch } = await client.reservations.get({ id });
        const released = await client.reservations.release({ id, epoch }, ctx.write(o));
        printChanged(ctx, released, `released ${released.id} (${target(released)})`);
      }),
    );
  return reservations;
}

/** What a reservation holds, in one cell: `repo: glob, glob` or the resource's name. */
function target(r: Reservation): string {
  return r.resource ?? `${r.repo ?? ''}: ${(r.paths ?? []).join(', ')}`;
}

function printChanged(ctx: Context, r: Reservation, message: string): void {
  if (ctx.out.json) return ctx.out.data(r);
  ctx.out.note(message);
}
