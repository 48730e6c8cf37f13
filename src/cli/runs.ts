import { text as textOf } from 'node:stream/consumers';
import { Command, Option } from 'commander';
import { RUN_LOG_BATCH_MAX, RUN_LOG_LINE_MAX, RUN_LOG_MAX_LINES } from '../domain/run-log.ts';
import { CliError, type Context, idempotencyOption, integer, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { TASK_ID } from './short-ids.ts';
import { leaseId } from './task-work.ts';
import { type UsageOptions, usageOf, withUsageOptions } from './usage-options.ts';

/** How often `runs tail` checks a quiet run: a lapse writes no event, so the stream alone would not show it ending. */
const RECHECK_MS = 15_000;

/**
 * `baton runs`: the attempts at tasks (spec/runs.md). `list` and `show` read them; `tail` prints a
 * run's log and follows it over the event stream until the run ends (handed in, released, lapsed).
 */
export function runsCommand(run: Run): Command {
  const runs = new Command('runs').description('runs: each attempt at a task (a lease), with its usage and log');
  runs
    .command('list', { isDefault: true })
    .description('list runs, newest first')
    .option('--task <id>', 'runs of this task')
    .option('--agent <id>', '`me`, or a principal id (humans only)')
    .option('--day <yyyy-mm-dd>', 'runs started on this UTC day')
    .option('--limit <n>', 'runs to show (1-100)', integer('--limit'), 25)
    .action(
      run(async (ctx, o: { task?: string; agent?: string; day?: string; limit: number }) => {
        const { client } = await ctx.connect();
        const page = await client.runs.list({ ...(o.task ? { task_id: o.task } : {}), ...(o.agent ? { agent: o.agent } : {}), ...(o.day ? { day: o.day } : {}), limit: o.limit });
        if (ctx.out.json) return ctx.out.data(page);
        ctx.out.table(
          ['RUN', 'TASK', 'HOLDER', 'OUTCOME', 'STARTED', 'TOKENS', 'COST', 'LOG'],
          page.data.map((r) => [r.id, r.task_id, r.holder.id, r.outcome, r.started_at, String(r.usage.input_tokens + r.usage.output_tokens), cost(r.usage), String(r.log_lines)]),
        );
      }),
    );
  runs
    .command('show')
    .description('one run: who, when, outcome, usage, and the last lines of its log')
    .argument('<id>', 'a run (lea_…), or a task (its latest run)')
    .option('--lines <n>', 'log lines to show (0-500)', integer('--lines'), 20)
    .action(
      run(async (ctx, id: string, o: { lines: number }) => {
        const { client } = await ctx.connect();
        const got = await client.runs.get({ id: await runId(ctx, id), log_lines: o.lines });
        if (ctx.out.json) return ctx.out.data(got);
        ctx.out.line(`${got.id}  ${got.outcome}  task ${got.task_id}  by ${got.holder.id}${got.machine ? ` on ${got.machine}` : ''}`);
        ctx.out.line(`started ${got.started_at}${got.ended_at ? `, ended ${got.ended_at}` : ''}`);
        ctx.out.line(`usage: ${got.usage.input_tokens} in, ${got.usage.output_tokens} out, ${got.usage.tool_calls} tool calls, ${cost(got.usage)}${got.usage.model ? ` (${got.usage.model})` : ''}`);
        for (const line of got.log) ctx.out.line(logLine(line));
      }),
    );
  runs
    .command('tail')
    .description("print a run's log and follow it until the run ends (exit 0 then)")
    .argument('<id>', 'a run (lea_…), or a task (its latest run)')
    .option('--lines <n>', 'log lines to show first (0-500)', integer('--lines'), 20)
    .option('--no-follow', 'print the lines and exit')
    .action(
      run(async (ctx, id: string, o: { lines: number; follow: boolean }) => {
        const { client } = await ctx.connect();
        const runOf = await runId(ctx, id);
        // The stream starts after the newest event now, so nothing between the first read and it is missed.
        const since = (await client.events.list({ order: 'desc', limit: 1, fields: ['id'] })).data[0]?.id;
        let printed = 0;
        const print = <R extends { log: readonly LogLine[]; log_lines: number }>(got: R): R => {
          for (const line of got.log.filter((l) => l.seq > printed)) ctx.out.line(ctx.out.json ? JSON.stringify(line) : logLine(line));
          printed = Math.max(printed, got.log_lines);
          return got;
        };
        /** Prints the lines not printed yet; answers the run. */
        const catchUp = async () => {
          const run = await client.runs.get({ id: runOf, log_lines: 0 });
          return run.log_lines > printed ? print(await client.runs.get({ id: runOf, log_lines: Math.min(500, run.log_lines - printed) })) : run;
        };
        let current = print(await client.runs.get({ id: runOf, log_lines: o.lines }));
        if (o.follow && current.outcome === 'running') {
          const stop = new AbortController();
          const recheck = setInterval(() => {
            void catchUp()
              .then((r) => r.outcome !== 'running' && stop.abort())
              .catch(() => undefined);
          }, RECHECK_MS);
          try {
            for await (const _ of client.events.follow({ subject: current.task_id, ...(since ? { since } : {}) }, { signal: stop.signal })) {
              current = await catchUp();
              if (current.outcome !== 'running') break;
            }
          } finally {
            clearInterval(recheck);
            // Ends the stream's connection, which would keep the process alive.
            stop.abort();
          }
          current = await catchUp();
        }
        ctx.out.note(`run ${current.id} ${current.outcome}`);
      }),
    );
  addReportCommands(runs, run);
  return runs;
}

/** What the holder of a run reports from a shell: its usage (which budgets are charged with) and log lines. */
function addReportCommands(runs: Command, run: Run): void {
  withUsageOptions(
    runs
      .command('usage')
      .description('report what your run spent since your last report: tokens, cost, tool calls (budgets are charged with it)')
      .argument('<id>', `${TASK_ID}, or lease id, of a task you hold`),
  )
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: UsageOptions & { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const reported = await client.runs.usage({ id: await leaseId(client, id), ...usageOf(o) }, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(reported);
        ctx.out.note(`run ${reported.id} so far: ${reported.usage.input_tokens + reported.usage.output_tokens} tokens, ${cost(reported.usage)}, ${reported.usage.tool_calls} tool calls`);
      }),
    );
  runs
    .command('log')
    .description("append lines to your run's log, which people follow with runs tail; without lines, standard input is read")
    .argument('<id>', `${TASK_ID}, or lease id, of a task you hold`)
    .argument('[lines...]', 'the lines; long ones are cut into pieces the log holds')
    .addOption(new Option('--level <level>', 'how it reads').choices(['info', 'warn', 'error'] as const).default('info'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, given: string[], o: { level: 'info' | 'warn' | 'error'; idempotencyKey?: string }) => {
        if (given.length === 0 && process.stdin.isTTY) throw new CliError('give the lines, or pipe them in: … | baton runs log <id>', EXIT.usage);
        const text = given.length > 0 ? given.join('\n') : await textOf(process.stdin);
        const lines = logLines(text);
        if (lines.length === 0) throw new CliError('nothing to log: give the lines, or pipe them in', EXIT.usage);
        const { client } = await ctx.connect();
        const lease = await leaseId(client, id);
        const { idempotencyKey } = ctx.write(o);
        let held = 0;
        // One call per batch the server takes, each under a key of its own made from the invocation's.
        for (let from = 0; from < lines.length; from += RUN_LOG_BATCH_MAX) {
          const batch = lines.slice(from, from + RUN_LOG_BATCH_MAX);
          held = (await client.runs.log({ id: lease, lines: batch, level: o.level }, { idempotencyKey: `${idempotencyKey}:${from}` })).log_lines;
        }
        if (ctx.out.json) return ctx.out.data({ id: lease, appended: lines.length, log_lines: held });
        ctx.out.note(`appended ${lines.length} line(s) to run ${lease}; it holds ${held} of ${RUN_LOG_MAX_LINES}`);
      }),
    );
}

/** Text as log lines: blank ones left out, long ones cut to what one line holds. */
function logLines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line.trim() !== '').flatMap((line) => {
    const pieces: string[] = [];
    for (let at = 0; at < line.length; at += RUN_LOG_LINE_MAX) pieces.push(line.slice(at, at + RUN_LOG_LINE_MAX));
    return pieces;
  });
}

/** A run id as given, or a task's latest run. */
async function runId(ctx: Context, id: string): Promise<string> {
  if (id.startsWith('lea_')) return id;
  const { client } = await ctx.connect();
  const latest = (await client.runs.list({ task_id: id, limit: 1 })).data[0];
  if (!latest) throw new CliError(`task ${id} has no run yet: nobody has claimed it.`, EXIT.notFound);
  return latest.id;
}

function cost(usage: { cost: number; currency: string | null }): string {
  return usage.currency ? `${usage.cost.toFixed(2)} ${usage.currency}` : '-';
}

interface LogLine {
  seq: number;
  at: string;
  level: string;
  line: string;
}

function logLine(line: LogLine): string {
  return `${line.at.slice(11, 19)} ${line.level.padEnd(5)} ${line.line}`;
}
