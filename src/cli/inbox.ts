import { readFile, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import type { InputOf } from '../client/index.ts';
import { collect, duration, integer, type Run } from './context.ts';
import { nameOf, principalNames } from './names.ts';
import { INBOX_KINDS, INBOX_STATES } from '../domain/inbox-kinds.ts';
import { EXIT } from './exit-codes.ts';

/** The inbox's filters as the server reads them (the CLI passes the user's words on; the server refuses unknown ones). */
type InboxFilter = InputOf<'inbox_list'>;

interface WaitOptions {
  cursor?: string;
  cursorFile?: string;
  timeout: number;
  work: boolean;
}

/**
 * `baton wait`, `baton inbox` and `baton answer`: what waits on you. `wait` blocks until something
 * arrives (exit 0, printed) or the timeout passes (exit 8, nothing printed); with --cursor-file the
 * cursor is read before and written after, so a host's idle hook misses nothing between two runs.
 */
export function inboxCommands(run: Run): Command[] {
  const waitCommand = new Command('wait')
    .description('block until something arrives for you (an ask, an answer, a mention, a review decision, work to claim); exit 8 if nothing did before --timeout')
    .option('--cursor <cursor>', 'resume after this cursor (printed by the last wait)')
    .option('--cursor-file <path>', 'read the cursor from this file, and write the new one back')
    .option('--timeout <duration>', 'how long to wait: 45, 30s or 1m, at most 60 s', duration('--timeout'), 60)
    .option('--no-work', 'do not wake for claimable work')
    .action(
      run(async (ctx, o: WaitOptions) => {
        const { client } = await ctx.connect();
        const saved = o.cursorFile ? (await readFile(o.cursorFile, 'utf8').catch(() => '')).trim() : '';
        const cursor = o.cursor ?? (saved || undefined);
        const got = await client.wait({ ...(cursor ? { after: cursor } : {}), timeout_s: Math.min(o.timeout, 60), work: o.work ? 'yes' : 'no' });
        if (o.cursorFile) await writeFile(o.cursorFile, `${got.cursor}\n`);
        if (ctx.out.json) ctx.out.data(got);
        else {
          for (const item of got.items) ctx.out.line(`${item.type}\t${item.task_id}\tby ${item.by}\t${excerpt(item.data)}`);
          if (got.work) ctx.out.line(`work\t${got.work.task_id}\t${got.work.title}`);
          ctx.out.note(`cursor: ${got.cursor}`);
        }
        if (got.timed_out) process.exitCode = EXIT.idle;
      }),
    );

  const inbox = new Command('inbox').description('your inbox: asks to you, answers to yours, mentions, review decisions, assignments, approvals, overdue waits, budgets running out');
  inbox
    .command('list', { isDefault: true })
    .description('list your inbox items, newest first (unread and read by default)')
    .option('--state <states>', `${INBOX_STATES.join(', ')} (comma-separated)`, collect)
    .option('--kind <kinds>', `${INBOX_KINDS.join(', ')} (comma-separated)`, collect)
    .option('--limit <n>', 'items to show (1-100)', integer('--limit'), 25)
    .action(
      run(async (ctx, o: { state?: string[]; kind?: string[]; limit: number }) => {
        const { client } = await ctx.connect();
        const page = await client.inbox.list({ state: (o.state ?? ['unread', 'read']) as InboxFilter['state'], ...(o.kind ? { kind: o.kind as InboxFilter['kind'] } : {}), limit: o.limit });
        if (ctx.out.json) return ctx.out.data(page);
        const names = await principalNames(client, page.data.map((i) => i.by));
        ctx.out.table(['ID', 'KIND', 'STATE', 'TASK', 'BY', 'WHAT'], page.data.map((i) => [i.id, i.kind, i.state, i.task_id, nameOf(names, i.by), i.excerpt.slice(0, 60)]));
        ctx.out.note(`${page.counts.unread} unread, ${page.counts.read} read, ${page.counts.done} done`);
      }),
    );
  inbox
    .command('mark')
    .description('mark inbox items read, unread or done')
    .argument('<state>', 'read, unread or done')
    .argument('<ids...>', 'inbox item ids (inb_…)')
    .action(
      run(async (ctx, state: string, ids: string[]) => {
        const { client } = await ctx.connect();
        const marked = await client.inbox.mark({ ids, state: state as 'read' }, ctx.write({}));
        if (ctx.out.json) return ctx.out.data(marked);
        ctx.out.note(`${marked.items.length} marked ${state}; ${marked.counts.unread} unread left`);
      }),
    );

  const answer = new Command('answer')
    .description('answer an ask addressed to you: an option label, or free text')
    .argument('<ask-id>', 'the ask (ask_…)')
    .argument('<answer>', 'an option label, or the text')
    .option('--idempotency-key <key>', 'a key to make a retry of this answer safe')
    .action(
      run(async (ctx, askId: string, text: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const ask = await client.asks.get({ id: askId });
        const input = ask.options.length > 0 ? { id: askId, option: text } : { id: askId, text };
        const answered = await client.asks.answer(input, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(answered);
        ctx.out.note(`Answered ${askId}: ${answered.answer?.text ?? ''}`);
      }),
    );
  return [waitCommand, inbox, answer];
}

function excerpt(data: Record<string, unknown>): string {
  const text = data['excerpt'] ?? data['question'] ?? (data['answer'] as { text?: string } | undefined)?.text ?? data['reason'] ?? '';
  return typeof text === 'string' ? text.replace(/\s+/g, ' ').slice(0, 100) : '';
}
