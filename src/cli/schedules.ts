import { Command, Option } from 'commander';
import type { OutputOf } from '../client/index.ts';
import { OVERLAPS, type Overlap } from '../domain/schedule-plan.ts';
import { CliError, collect, idempotencyOption, integer, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';
import { params } from './templates.ts';

type Schedule = OutputOf<'schedules_get'>;

interface CreateOptions {
  cron: string;
  timeZone: string;
  title?: string;
  label?: string[];
  assignee?: string;
  template?: string;
  param?: string[];
  overlap: Overlap;
  catchUp: number;
  idempotencyKey?: string;
}

/**
 * `baton schedules`: recurring work (spec/collaboration.md "Recurring work"): list, create one
 * that makes a task (`--title`) or a template's graph (`--template`) on a cron expression, pause,
 * resume and delete.
 */
export function schedulesCommand(run: Run): Command {
  const schedules = new Command('schedules').description('recurring work: a task or a template made on a cron expression');
  withPaging(schedules.command('list', { isDefault: true }).description('list the schedules with their next run')).action(
    run(async (ctx, o: PagingOptions) => {
      const { client } = await ctx.connect();
      const page = await readPages(o, (p) => client.schedules.list(p));
      printPage(ctx, page, (rows) => ctx.out.table(['ID', 'NAME', 'CRON', 'ZONE', 'MAKES', 'NEXT RUN', 'STATE'], rows.map((s) => [s.id, s.name, s.cron, s.time_zone, makes(s), s.next_runs[0] ?? '', s.enabled ? 'on' : 'paused'])));
    }),
  );
  schedules
    .command('create')
    .description('make a task (--title) or a template\'s tasks (--template) at each occurrence of --cron')
    .argument('<name>', 'a name for the schedule')
    .requiredOption('--cron <expression>', "five fields: minute hour day month weekday, e.g. '0 9 * * 1-5' (09:00 on weekdays)")
    .option('--time-zone <zone>', 'the IANA zone the expression is read in, e.g. Europe/Berlin', 'UTC')
    .option('--title <title>', 'the title of the task each occurrence makes')
    .option('--label <label>', 'a label of that task (repeatable)', collect)
    .option('--assignee <agent>', 'who that task is for (agt_…)')
    .option('--template <id>', 'instead of --title: the template (tpl_…) whose tasks each occurrence makes')
    .option('--param <name=value>', 'a template parameter (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .addOption(new Option('--overlap <rule>', 'while the last task is still open: skip, coalesce or always').choices(OVERLAPS).default('skip'))
    .option('--catch-up <n>', 'after downtime, how many missed occurrences to make', integer('--catch-up'), 0)
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, name: string, o: CreateOptions) => {
        if ((o.title === undefined) === (o.template === undefined)) throw new CliError('Say what each occurrence makes: --title for a task, or --template for a template\'s tasks (not both).', EXIT.usage);
        const { client } = await ctx.connect();
        const task = o.title === undefined ? undefined : { title: o.title, ...(o.label ? { labels: o.label } : {}), ...(o.assignee ? { assignee: o.assignee } : {}) };
        const template = o.template === undefined ? undefined : { id: o.template, params: params(o.param ?? []) };
        const s = await client.schedules.create({ name, cron: o.cron, time_zone: o.timeZone, overlap: o.overlap, catch_up: o.catchUp, ...(task ? { task } : {}), ...(template ? { template } : {}) }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(s);
        ctx.out.line(`created schedule ${s.id} (${s.name}): ${makes(s)} at ${s.cron} ${s.time_zone}; next ${s.next_runs.slice(0, 3).join(', ')}`);
      }),
    );
  for (const [verb, enabled] of [['pause', false], ['resume', true]] as const) {
    schedules
      .command(verb)
      .description(enabled ? 'resume a paused schedule' : 'pause a schedule: no occurrence is made until it resumes')
      .argument('<id>', 'the schedule (sch_…)')
      .addOption(idempotencyOption())
      .action(
        run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
          const { client } = await ctx.connect();
          const s = await client.schedules.update({ id, enabled }, ctx.write(o));
          if (ctx.out.json) return ctx.out.data(s);
          ctx.out.line(`${s.id} (${s.name}) is ${s.enabled ? `on; next ${s.next_runs[0] ?? 'none'}` : 'paused'}`);
        }),
      );
  }
  schedules
    .command('delete')
    .description('delete a schedule: it makes nothing more (what it made stays)')
    .argument('<id>', 'the schedule (sch_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const answer = await client.schedules.delete({ id }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(answer);
        ctx.out.line(`deleted schedule ${id}`);
      }),
    );
  return schedules;
}

function makes(s: Schedule): string {
  const title = s.task?.['title'];
  return s.template ? `template ${s.template.id}` : `task "${typeof title === 'string' ? title : ''}"`;
}
