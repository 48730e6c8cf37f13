import { type Command, Option } from 'commander';
import type { Context } from './context.ts';
import { integer } from './context.ts';

/** A page as every list operation answers it. */
export interface Page<T> {
  readonly data: T[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

export interface PagingOptions {
  readonly limit: number;
  readonly cursor?: string;
  readonly all?: boolean;
}

/** The largest page the API serves: `--all` reads in pages of this size. */
const PAGE_MAX = 100;

/** Adds `--limit`, `--cursor` and `--all` to a list command. */
export function withPaging(command: Command, defaultLimit = 50): Command {
  return command
    .option('--limit <n>', `at most this many per page (1–${PAGE_MAX})`, integer('--limit'), defaultLimit)
    .option('--cursor <cursor>', 'continue where an earlier page stopped (its next_cursor)')
    .addOption(new Option('--all', 'every item, following the cursor page after page').conflicts('cursor'));
}

/** One page from `--cursor` on, or with `--all` every page (the answer then has no next cursor). */
export async function readPages<T>(options: PagingOptions, read: (page: { limit: number; cursor?: string }) => Promise<Page<T>>): Promise<Page<T>> {
  if (!options.all) return read({ limit: options.limit, ...(options.cursor ? { cursor: options.cursor } : {}) });
  const data: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await read({ limit: PAGE_MAX, ...(cursor ? { cursor } : {}) });
    data.push(...page.data);
    if (!page.has_more || !page.next_cursor) return { data, has_more: false, next_cursor: null };
    cursor = page.next_cursor;
  }
}

/**
 * Prints a list: under --json the page (`data`, `has_more`, `next_cursor`); otherwise the table,
 * and when it was cut, a line on stderr with the command that shows the rest.
 */
export function printPage<T>(ctx: Context, page: Page<T>, table: (items: readonly T[]) => void): void {
  if (ctx.out.json) return ctx.out.data({ data: page.data, has_more: page.has_more, next_cursor: page.next_cursor });
  table(page.data);
  if (page.has_more && page.next_cursor) {
    ctx.out.note(`(${page.data.length} shown, more follow: ${[...withoutCursor(ctx.argv), '--cursor', page.next_cursor].join(' ')}; or --all for every one)`);
  }
}

/** The invocation, `baton` first, without any earlier --cursor. */
function withoutCursor(argv: readonly string[]): string[] {
  const args: string[] = ['baton'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--cursor') i++;
    else if (!arg.startsWith('--cursor=')) args.push(/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
  }
  return args;
}
