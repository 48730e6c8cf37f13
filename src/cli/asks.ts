import { Command } from 'commander';
import type { BatonClient, InputOf, OutputOf } from '../client/index.ts';
import { ASK_STATUSES } from '../domain/ask-statuses.ts';
import { oneLine } from '../one-line.ts';
import { CliError, collect, type Context, duration, idempotencyOption, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { nameOf, principalNames } from './names.ts';
import { type PagingOptions, printPage, readPages, withPaging } from './pages.ts';
import { resolveTaskId, TASK_ID } from './short-ids.ts';

type Ask = OutputOf<'asks_get'>;

/** The longest one `asks_get` call waits; `--wait` asks again until its own time is up. */
const WAIT_STEP_S = 60;

interface CreateOptions {
  to: string;
  option?: string[];
  escalate?: string[];
  due: string;
  default: string;
  wait?: number;
  idempotencyKey?: string;
}

/**
 * `baton asks …`: what an agent asks a human, from a shell (spec/asks.md). `create` asks, and with
 * `--wait` blocks until the answer (printed alone, for a script to read) or exits 8 if the ask is
 * still open then; `show --wait` waits on an ask made earlier. `baton answer` (inbox.ts) answers.
 */
export function asksCommand(run: Run): Command {
  const asks = new Command('asks').description('questions to people about a task: ask, wait for the answer, list, cancel (answer with baton answer)');
  asks
    .command('create')
    .description('ask someone a question about a task; they answer in their inbox (baton answer, the web app)')
    .argument('<task>', TASK_ID)
    .argument('<question>', 'the question (Markdown)')
    .requiredOption('--to <who>', 'who is asked: a principal (agt_… or name), or role:<role>')
    .option('--option <label>', 'an answer to choose from (repeatable); without any, the answer is free text', collect)
    .option('--escalate <who>', 'who is asked next when the deadline passes (repeatable, in order)', collect)
    .requiredOption('--due <when>', 'how long each addressee has (30m, 2h, 1d) or a time (RFC 3339)')
    .requiredOption('--default <answer>', 'the answer applied if nobody answers by the last deadline: an option label, or text')
    .option('--wait <duration>', 'then wait this long for the answer and print it; exit 8 if the ask is still open', duration('--wait'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, task: string, question: string, o: CreateOptions) => {
        const { client } = await ctx.connect();
        const options = o.option ?? [];
        const input: InputOf<'asks_create'> = {
          id: await resolveTaskId(client, task),
          question,
          to: o.to,
          ...(options.length > 0 ? { options: options.map((label) => ({ label })) } : {}),
          ...(o.escalate ? { escalation: o.escalate } : {}),
          ...dueOf(o.due),
          default: options.length > 0 ? { option: o.default } : { text: o.default },
        };
        const asked = await client.asks.create(input, ctx.write(o));
        if (o.wait === undefined) return printAsk(ctx, asked, true);
        ctx.out.note(`asked ${asked.id} (${asked.to}, due ${asked.due_at}); waiting for the answer`);
        printAnswer(ctx, await waitFor(client, asked, o.wait));
      }),
    );

  withPaging(
    asks
      .command('list')
      .description('asks, newest first: by default the open ones addressed to you')
      .option('--task <id>', 'asks on this task (then addressed to anyone)')
      .option('--to <who>', 'addressed to me, a principal id, or role:<role>')
      .option('--mine', 'the asks you made (then addressed to anyone)')
      .option('--status <status>', `${ASK_STATUSES.join(', ')} (repeatable, or comma-separated); open by default`, collect),
    25,
  ).action(
    run(async (ctx, o: PagingOptions & { task?: string; to?: string; mine?: boolean; status?: string[] }) => {
      const { client } = await ctx.connect();
      const taskId = o.task === undefined ? undefined : await resolveTaskId(client, o.task);
      const filters: InputOf<'asks_list'> = {
        status: (o.status ?? ['open']) as Ask['status'][],
        ...(taskId ? { task_id: taskId } : {}),
        ...(o.mine ? { asked_by: 'me' } : {}),
        ...(o.to ? { to: o.to } : taskId || o.mine ? {} : { to: 'me' }),
      };
      const page = await readPages(o, (p) => client.asks.list({ ...filters, ...p }));
      const names = await principalNames(client, page.data.flatMap((a) => [a.to, a.asked_by.id]));
      printPage(ctx, page, (rows) =>
        ctx.out.table(
          ['ASK', 'TASK', 'STATUS', 'TO', 'BY', 'DUE', 'QUESTION'],
          rows.map((a) => [a.id, a.task_id, a.status, nameOf(names, a.to), nameOf(names, a.asked_by.id), a.due_at, oneLine(a.question, 60)]),
        ),
      );
    }),
  );

  asks
    .command('show')
    .description('one ask: its question, who has it, and its answer once given')
    .argument('<id>', 'the ask (ask_…)')
    .option('--wait <duration>', 'wait this long for the answer and print it; exit 8 if the ask is still open', duration('--wait'))
    .action(
      run(async (ctx, id: string, o: { wait?: number }) => {
        const { client } = await ctx.connect();
        const ask = await client.asks.get({ id });
        if (o.wait === undefined) return printAsk(ctx, ask);
        printAnswer(ctx, await waitFor(client, ask, o.wait));
      }),
    );

  asks
    .command('cancel')
    .description('withdraw an open ask you made (a person may withdraw any)')
    .argument('<id>', 'the ask (ask_…)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const cancelled = await client.asks.cancel({ id }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(cancelled);
        ctx.out.note(`cancelled ${cancelled.id}`);
      }),
    );
  return asks;
}

/** `--due`: a duration is each addressee's time (timeout_s); anything else is sent as the deadline (due_at), which the server checks. */
function dueOf(due: string): { timeout_s: number } | { due_at: string } {
  const seconds = /^\d+[smhd]?$/.test(due.trim()) ? duration('--due')(due) : undefined;
  if (seconds === 0) throw new CliError('--due must be longer than 0', EXIT.usage);
  return seconds === undefined ? { due_at: due } : { timeout_s: seconds };
}

/** Reads the ask until it closes or `seconds` pass, `asks_get`'s long poll at most a minute at a time. */
async function waitFor(client: BatonClient, ask: Ask, seconds: number): Promise<Ask> {
  const until = Date.now() + seconds * 1000;
  let current = ask;
  for (;;) {
    const left = Math.ceil((until - Date.now()) / 1000);
    if (current.status !== 'open' || left <= 0) return current;
    current = await client.asks.get({ id: current.id, wait_s: Math.min(left, WAIT_STEP_S) });
  }
}

/** An answer as a script reads it (the chosen option's label, or the text) on stdout; an ask still open exits 8. */
function printAnswer(ctx: Context, ask: Ask): void {
  if (ask.status === 'open') process.exitCode = EXIT.idle;
  if (ctx.out.json) return ctx.out.data(ask);
  if (ask.status === 'open') return ctx.out.note(`${ask.id} is still open (due ${ask.due_at}); wait again with: baton asks show ${ask.id} --wait 10m`);
  if (!ask.answer) return ctx.out.note(`${ask.id} was ${ask.status} without an answer`);
  ctx.out.line(ask.answer.option ?? ask.answer.text);
  ctx.out.note(`${ask.id} ${ask.status}${ask.defaulted ? ' (the default, at the deadline)' : ''}${ask.answered_by ? ` by ${ask.answered_by.id}` : ''}`);
}

/** An ask in a few lines (or its JSON); its id alone on stdout when it was just made, so `$(baton asks create …)` is its id. */
function printAsk(ctx: Context, ask: Ask, justMade = false): void {
  if (ctx.out.json) return ctx.out.data(ask);
  if (justMade) {
    ctx.out.line(ask.id);
    return ctx.out.note(`asked ${ask.to} on ${ask.task_id}, due ${ask.due_at}; wait for the answer with: baton asks show ${ask.id} --wait 10m`);
  }
  ctx.out.line(`${ask.id}  ${ask.status}  task ${ask.task_id}  asked by ${ask.asked_by.id}`);
  ctx.out.line(`to ${ask.to}${ask.escalation.length > 0 ? `, then ${ask.escalation.join(', ')}` : ''}; due ${ask.due_at}`);
  ctx.out.line(ask.question);
  for (const option of ask.options) ctx.out.line(`  - ${option.label}`);
  if (ask.answer) ctx.out.line(`answer: ${ask.answer.option ?? ask.answer.text}${ask.defaulted ? ' (the default)' : ''}`);
}
