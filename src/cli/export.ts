import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Argument, Command, Option } from 'commander';
import type { Run } from './context.ts';

interface ExportOptions {
  from: string;
  to?: string;
  format: 'jsonl' | 'csv';
  output?: string;
  progress?: boolean;
}

/** Progress is said after this many more rows. */
const PROGRESS_EVERY = 1000;

/**
 * Counts the rows passing through: a line of JSON lines, a CSV record (a line break outside quotes,
 * so a quoted cell holding one is not counted twice), the CSV header left out.
 */
function rowCounter(format: 'jsonl' | 'csv', onRows: (rows: number) => void): Transform {
  let rows = format === 'csv' ? -1 : 0;
  let quoted = false;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const before = rows;
      for (const byte of chunk) {
        if (byte === 0x22 && format === 'csv') quoted = !quoted;
        else if (byte === 0x0a && !quoted) rows++;
      }
      if (rows !== before) onRows(Math.max(rows, 0));
      done(null, chunk);
    },
  });
}

/**
 * `baton export runs|usage|events`: a window of runs, usage or events as JSON lines or CSV
 * (exports_get, streamed), to a file or stdout. Rows written are said on stderr as they go when it
 * is a terminal or with --progress; a file is written beside its name and renamed once whole, so a
 * broken transfer never leaves a short export under the name asked for.
 */
export function exportCommand(run: Run): Command {
  return new Command('export')
    .description('export runs, usage or events of a time window as JSON lines or CSV, streamed (admins and owners)')
    .addArgument(new Argument('<dataset>', 'runs, usage or events').choices(['runs', 'usage', 'events']))
    .requiredOption('--from <time>', 'start (inclusive): a UTC day YYYY-MM-DD or a date-time')
    .option('--to <time>', 'end (exclusive): a UTC day or a date-time (default: now)')
    .addOption(new Option('--format <format>', 'JSON lines or CSV').choices(['jsonl', 'csv']).default('jsonl'))
    .option('--output <file>', 'write to this file instead of stdout')
    .option('--progress', 'say the rows written on stderr even when it is not a terminal')
    .action(
      run(async (ctx, dataset: 'runs' | 'usage' | 'events', o: ExportOptions) => {
        const { client } = await ctx.connect();
        const to = o.to ?? new Date().toISOString();
        const body = await client.exports.download({ dataset, from: o.from, to }, o.format);
        const tty = process.stderr.isTTY;
        let said = 0;
        let written = 0;
        const counter = rowCounter(o.format, (rows) => {
          written = rows;
          if (!(tty || o.progress) || rows - said < PROGRESS_EVERY) return;
          said = rows;
          process.stderr.write(tty ? `\r${rows} rows written` : `${rows} rows written\n`);
        });
        const file = o.output === undefined ? undefined : resolve(o.output);
        const partial = file === undefined ? undefined : `${file}.partial`;
        const sink: Writable = partial === undefined ? process.stdout : createWriteStream(partial);
        try {
          await pipeline(Readable.fromWeb(body as Parameters<typeof Readable.fromWeb>[0]), counter, sink, { end: partial !== undefined });
          if (partial !== undefined && file !== undefined) await rename(partial, file);
        } catch (error) {
          if (partial !== undefined) await rm(partial, { force: true });
          throw error;
        } finally {
          if (tty && said > 0) process.stderr.write('\n');
        }
        const where = file ?? 'stdout';
        if (ctx.out.json && file !== undefined) return ctx.out.data({ dataset, format: o.format, from: o.from, to, rows: written, file });
        ctx.out.note(`${written} ${dataset} rows from ${o.from} up to ${to} written to ${where}.`);
      }),
    );
}
