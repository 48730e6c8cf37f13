import { Command, Option } from 'commander';
import type { BatonClient, Task } from '../client/index.ts';
import { TASK_PRIORITIES } from '../domain/task-priority.ts';
import { TASK_STATUSES } from '../domain/task-status.ts';
import { CliError, collect, type Context, idempotencyOption, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';
import { resolveTaskId, TASK_ID } from './short-ids.ts';
import { eventRow, printTask, printTaskTable } from './task-print.ts';
import { addWorkCommands } from './task-work.ts';
import { nameOf, principalNames } from './names.ts';


/** `--max-cost`: an amount of money; `none` (update) removes the cap (commander keeps no null). The server checks the bound. */
function maxCost(value: string): number | 'none' {
  if (value === 'none') return value;
  const n = Number(value);
  if (!Number.isFinite(n) || value.trim() === '') throw new CliError(`--max-cost must be an amount such as 2.5, or none, got "${value}"`, EXIT.usage);
  return n;
}
/** The task's budget options (spec/runs.md, "A task's max_cost"), as tasks_create and tasks_update take them. */
const maxCostOptions = (command: Command) =>
  command.option('--max-cost <amount>', 'cap what the task’s runs may spend, in --max-cost-currency; none removes it (raising or removing: admins and owners)', maxCost).option('--max-cost-currency <code>', 'ISO 4217, USD by default');
/** What tasks_update is sent for them. */
const maxCostChanges = (o: { maxCost?: number | 'none'; maxCostCurrency?: string }) => ({ ...(o.maxCost === undefined ? {} : { max_cost: o.maxCost === 'none' ? null : o.maxCost }), ...(o.maxCostCurrency ? { max_cost_currency: o.maxCostCurrency } : {}) });

/** `baton tasks …`: the task commands, on the REST API through the typed client. */
export function tasksCommand(run: Run): Command {
  const tasks = new Command('tasks').description('list, create, claim and follow tasks');

  withPaging(
    tasks
      .command('list')
      .description('list tasks, newest first; with --search, best match first')
      .option('--search <text>', 'words of the title, description or comments ("phrases", -word, or; the last word may be its start)')
      .addOption(new Option('--status <status>', 'only these statuses (repeatable, or comma-separated)').argParser(collect))
      .option('--label <label>', 'only tasks carrying all these labels (repeatable)', collect)
      .option('--assignee <who>', 'only tasks assigned to @me (or me), none, or a principal (agt_…)')
      .addOption(new Option('--archived <which>', 'archived tasks, hidden otherwise: only them, or any').choices(['only', 'any'] as const)),
  ).action(
    run(async (ctx, o: PagingOptions & { search?: string; status?: string[]; label?: string[]; assignee?: string; archived?: 'only' | 'any' }) => {
      const { client } = await ctx.connect();
      const filters = {
        ...(o.search === undefined ? {} : { q: o.search }),
        ...(o.status ? { status: o.status as (typeof TASK_STATUSES)[number][] } : {}),
        ...(o.label ? { labels: o.label } : {}),
        ...(o.assignee ? { assignee: o.assignee.replace(/^@me$/, 'me') } : {}),
        ...(o.archived ? { archived: o.archived } : {}),
      };
      const page = await ctx.out.progress('listing tasks', readPages(o, (p) => client.tasks.list({ ...filters, ...p })));
      const names = await principalNames(client, page.data.flatMap((t) => (t.lease ? [t.lease.holder.id] : [])));
      printPage(ctx, page, (rows) => printTaskTable(ctx, rows, names));
    }),
  );

  tasks
    .command('ready')
    .description('the tasks you could claim now: todo, for you or for anyone, waiting on no blocker, not backing off; highest priority first')
    .option('--label <label>', 'only tasks carrying all these labels (repeatable)', collect)
    .action(
      run(async (ctx, o: { label?: string[] }) => {
        const { client } = await ctx.connect();
        const labels = o.label ? { labels: o.label } : {};
        // The server filters by status and assignee; blockers and back-off are read off each item.
        const read = (assignee: 'me' | 'none') => readPages({ all: true, limit: 100 }, (p) => client.tasks.list({ status: ['todo'], assignee, ...labels, ...p }));
        const pages = await ctx.out.progress('listing tasks', Promise.all([read('me'), read('none')]));
        const now = Date.now();
        const ready = pages
          .flatMap((page) => page.data)
          .filter((t) => !t.lease && (t.waiting_on ?? []).length === 0 && (!t.not_before || Date.parse(t.not_before) <= now))
          .sort((a, b) => TASK_PRIORITIES.indexOf(b.priority ?? 'normal') - TASK_PRIORITIES.indexOf(a.priority ?? 'normal') || a.id.localeCompare(b.id));
        printPage(ctx, { data: ready, has_more: false, next_cursor: null }, (rows) => printTaskTable(ctx, rows, new Map()));
        if (!ctx.out.json && ready.length === 0) ctx.out.note('nothing is ready for you to claim');
      }),
    );

  tasks
    .command('show')
    .description('show one task')
    .argument('<id>', TASK_ID)
    .action(
      run(async (ctx, given: string) => {
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        await printTask(ctx, client, await client.tasks.get({ id, view: 'full' }));
      }),
    );

  maxCostOptions(
    tasks
      .command('create')
      .description('create a task (status todo)')
      .argument('<title>', 'what needs doing')
      .option('-d, --description <text>', 'details')
      .addOption(new Option('-p, --priority <priority>', 'priority').choices(TASK_PRIORITIES))
      .option('--label <label>', 'a label (repeatable)', collect)
      .option('--blocked-by <id>', 'a task that must be done first (repeatable)', collect)
      .option('--assignee <who>', 'who it is for, agt_… or me: only they can claim it'),
  )
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, title: string, o: { description?: string; priority?: (typeof TASK_PRIORITIES)[number]; label?: string[]; blockedBy?: string[]; assignee?: string; maxCost?: number | 'none'; maxCostCurrency?: string; idempotencyKey?: string }) => {
        if (o.maxCost === 'none') throw new CliError('--max-cost none removes a cap (tasks update); leave it out to create a task without one', EXIT.usage);
        const { client } = await ctx.connect();
        const assignee = o.assignee === undefined ? undefined : await principalArg(client, o.assignee);
        const task = await client.tasks.create(
          { title, ...(o.description ? { description: o.description } : {}), ...(o.priority ? { priority: o.priority } : {}), ...(o.label ? { labels: o.label } : {}), ...(o.blockedBy ? { blocked_by: o.blockedBy } : {}), ...(assignee ? { assignee } : {}), ...(typeof o.maxCost === 'number' ? { max_cost: o.maxCost } : {}), ...(o.maxCostCurrency ? { max_cost_currency: o.maxCostCurrency } : {}) },
          ctx.write(o),
        );
        // The answer is the compact view, which leaves the assignee out: show whom it went to.
        const shown = assignee && !ctx.out.json ? await client.tasks.get({ id: task.id, view: 'full' }) : task;
        await printTask(ctx, client, shown, `created ${task.id}`);
      }),
    );

  maxCostOptions(
    tasks
      .command('update')
      .description('change a task; refused if someone changed it since it was read (If-Match)')
      .argument('<id>', TASK_ID)
      .option('--title <title>', 'new title')
      .option('-d, --description <text>', 'new description')
      .addOption(new Option('-p, --priority <priority>', 'new priority').choices(TASK_PRIORITIES))
      .option('--label <label>', 'replace the labels (repeatable)', collect)
      .addOption(new Option('--status <status>', 'new status').choices(TASK_STATUSES))
      .addOption(new Option('--archive', 'archive it (a done or cancelled task)').conflicts('unarchive'))
      .option('--unarchive', 'bring an archived task back'),
  )
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, given: string, o: { title?: string; description?: string; priority?: (typeof TASK_PRIORITIES)[number]; label?: string[]; status?: (typeof TASK_STATUSES)[number]; archive?: true; unarchive?: true; maxCost?: number | 'none'; maxCostCurrency?: string; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        const changes = {
          ...(o.title ? { title: o.title } : {}),
          ...(o.description ? { description: o.description } : {}),
          ...(o.priority ? { priority: o.priority } : {}),
          ...(o.label ? { labels: o.label } : {}),
          ...(o.status ? { status: o.status } : {}),
          ...(o.archive ? { archived: true } : o.unarchive ? { archived: false } : {}),
          ...maxCostChanges(o),
        };
        const task = await updateCurrent(ctx, client, id, changes, o);
        await printTask(ctx, client, task, `updated ${task.id} (version ${task.version})`);
      }),
    );

  tasks
    .command('move')
    .description('move a task to another status (the state machine decides which are legal)')
    .argument('<id>', TASK_ID)
    .addArgument(new Command().createArgument('<status>', 'the new status').choices(TASK_STATUSES))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, given: string, status: (typeof TASK_STATUSES)[number], o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        const task = await updateCurrent(ctx, client, id, { status }, o);
        await printTask(ctx, client, task, `${task.id} is now ${task.status}`);
      }),
    );

  addWorkCommands(tasks, run);

  tasks
    .command('assign')
    .description('say who a task is for (only they can claim it), or none to unassign it')
    .argument('<id>', TASK_ID)
    .argument('<who>', 'agt_…, me, or none')
    .option('--release-lease', "end another's lease on it (the task returns to todo)")
    .option('-c, --comment <text>', 'a comment posted with the assignment (Markdown; @name mentions notify)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, given: string, who: string, o: { releaseLease?: true; comment?: string; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        const assignee = who === 'none' ? null : await principalArg(client, who);
        const task = await client.tasks.assign({ id, assignee, ...(o.releaseLease ? { release_lease: true } : {}), ...(o.comment ? { comment: o.comment } : {}) }, ctx.write(o));
        await printTask(ctx, client, task, assignee === null ? `${task.id} unassigned` : `${task.id} assigned`);
      }),
    );

  tasks
    .command('review')
    .description('decide on a task in review: approve it (done), or request changes (back to its last holder)')
    .argument('<id>', TASK_ID)
    .addArgument(new Command().createArgument('<decision>', 'approve or request-changes').choices(['approve', 'request-changes']))
    .option('-c, --comment <text>', 'feedback, posted as a comment; required to request changes')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, given: string, decision: 'approve' | 'request-changes', o: { comment?: string; idempotencyKey?: string }) => {
        if (decision === 'request-changes' && !o.comment) throw new CliError('request-changes needs --comment saying what to change', EXIT.usage);
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        const task = await client.tasks.review({ id, decision: decision === 'approve' ? 'approve' : 'request_changes', ...(o.comment ? { comment: o.comment } : {}) }, ctx.write(o));
        await printTask(ctx, client, task, decision === 'approve' ? `${task.id} approved: ${task.status}` : `${task.id} sent back: ${task.status}`);
      }),
    );

  tasks
    .command('comment')
    .description('comment on a task (Markdown; @name mentions a principal)')
    .argument('<id>', TASK_ID)
    .argument('<body>', 'the comment')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, given: string, body: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        const comment = await client.comments.create({ id, body }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(comment);
        ctx.out.note(`commented ${comment.id} on ${id}`);
      }),
    );

  withPaging(tasks.command('comments').description("a task's comments, oldest first").argument('<id>', TASK_ID)).action(
    run(async (ctx, given: string, o: PagingOptions) => {
      const { client } = await ctx.connect();
      const id = await resolveTaskId(client, given);
      const page = await readPages(o, (p) => client.comments.list({ id, ...p }));
      const names = await principalNames(client, page.data.map((c) => c.author.id));
      printPage(ctx, page, (rows) =>
        ctx.out.table(
          ['TIME', 'BY', 'COMMENT'],
          rows.map((c) => [c.created_at, nameOf(names, c.author.id), c.body === null ? '(deleted)' : c.body.replace(/\s+/g, ' ')]),
        ),
      );
    }),
  );

  withPaging(tasks.command('events').description("a task's timeline, oldest first").argument('<id>', TASK_ID)).action(
    run(async (ctx, given: string, o: PagingOptions) => {
      const { client } = await ctx.connect();
      const id = await resolveTaskId(client, given);
      const page = await readPages(o, (p) => client.tasks.events({ id, ...p }));
      const names = await principalNames(client, page.data.flatMap((e) => (e.actor ? [e.actor.id] : [])));
      printPage(ctx, page, (rows) => ctx.out.table(['TIME', 'TYPE', 'BY', 'DATA'], rows.map((event) => eventRow(event, names))));
    }),
  );

  tasks
    .command('watch')
    .description('print events as they happen (follows the live stream; reconnects after a drop, missing nothing)')
    .option('--type <type>', 'only these event types, e.g. task.created (repeatable)', collect)
    .option('--subject <id>', 'only events about this task (or other resource)')
    .option('--since <event-id>', 'start after this event instead of now')
    .action(
      run(async (ctx, o: { type?: string[]; subject?: string; since?: string }) => {
        const { client } = await ctx.connect();
        const stop = new AbortController();
        process.once('SIGINT', () => stop.abort());
        process.once('SIGTERM', () => stop.abort());
        const events = client.events.follow(
          { ...(o.type ? { types: o.type } : {}), ...(o.subject ? { subject: o.subject } : {}), ...(o.since ? { since: o.since } : {}) },
          { signal: stop.signal, onReconnect: (error, ms) => ctx.out.note(`connection lost (${reason(error)}); reconnecting in ${(ms / 1000).toFixed(1)} s`) },
        );
        if (!ctx.out.json) ctx.out.note('watching; Ctrl-C stops');
        for await (const event of events) {
          // One JSON document per line with --json (NDJSON), so `jq` can follow along.
          if (ctx.out.json) ctx.out.line(JSON.stringify(event));
          else ctx.out.line(eventRow(event, new Map()).join('  '));
        }
      }),
    );

  return tasks;
}

/** PATCHes with If-Match at the version just read, and the lease epoch when the caller holds the task. */
async function updateCurrent(ctx: Context, client: BatonClient, id: string, changes: Record<string, unknown>, o: { idempotencyKey?: string }): Promise<Task> {
  const [current, me] = await Promise.all([client.tasks.get({ id, view: 'full' }), client.whoami({})]);
  const epoch = current.lease && current.lease.holder.id === me.principal.id ? { lease_epoch: current.lease.epoch } : {};
  return client.tasks.update({ id, ...changes, ...epoch }, ctx.write(o, { ifMatch: current.version ?? 0 }));
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A principal named on the command line: `me` (or `@me`) is the caller, anything else an id as given. */
async function principalArg(client: BatonClient, who: string): Promise<string> {
  return who === 'me' || who === '@me' ? (await client.whoami({})).principal.id : who;
}
