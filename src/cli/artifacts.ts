import { readFile, writeFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { Command } from 'commander';
import type { InputOf, OutputOf } from '../client/index.ts';
import { CliError, idempotencyOption, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { resolveTaskId } from './short-ids.ts';

type Artifact = OutputOf<'artifacts_get'>;

/** Media types by file extension, for an upload that does not say (--type); others are text/plain or application/octet-stream by their bytes. */
const MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.diff': 'text/x-diff',
  '.patch': 'text/x-diff',
  '.html': 'text/html',
  '.csv': 'text/csv',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
};

/**
 * `baton artifacts …`: long bodies kept beside a task (a diff, a report, a log), handed in by id
 * (`baton tasks hand-in --artifact art_…`). `upload` sends a file (or standard input, `-`) as text
 * when it is UTF-8, else as base64; `download` writes the bytes back out.
 */
export function artifactsCommand(run: Run): Command {
  const artifacts = new Command('artifacts').description('files kept beside a task (a diff, a report): upload one to hand in, show or download one');
  artifacts
    .command('upload')
    .description('store a file as an artifact and print its id (art_…), e.g. for tasks hand-in --artifact')
    .argument('<file>', 'the file, or - for standard input')
    .option('--task <id>', 'attach it to this task')
    .option('--name <name>', 'its name for people (default: the file name)')
    .option('--type <media-type>', 'its media type (default: by the file extension, else text/plain or application/octet-stream)')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, file: string, o: { task?: string; name?: string; type?: string; idempotencyKey?: string }) => {
        const bytes = file === '-' ? await buffer(process.stdin) : await readFile(file).catch((error: NodeJS.ErrnoException) => {
          throw new CliError(`cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`, EXIT.usage);
        });
        const { client } = await ctx.connect();
        const text = utf8(bytes);
        const name = o.name ?? (file === '-' ? undefined : basename(file));
        const type = o.type ?? MEDIA_TYPES[extname(file).toLowerCase()];
        const input: InputOf<'artifacts_create'> = {
          ...(text === undefined ? { content: bytes.toString('base64'), encoding: 'base64' as const } : { content: text }),
          ...(type ? { content_type: type } : {}),
          ...(name ? { name } : {}),
          ...(o.task ? { task_id: await resolveTaskId(client, o.task) } : {}),
        };
        const created = await client.artifacts.create(input, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(created);
        ctx.out.line(created.id);
        ctx.out.note(`stored ${describe(created)}`);
      }),
    );
  artifacts
    .command('show')
    .description("an artifact's facts: name, task, media type, size, checksum, who stored it")
    .argument('<id>', 'the artifact (art_…)')
    .action(
      run(async (ctx, id: string) => {
        const { client } = await ctx.connect();
        const artifact = await client.artifacts.get({ id });
        if (ctx.out.json) return ctx.out.data(artifact);
        ctx.out.line(describe(artifact));
        ctx.out.line(`stored ${artifact.created_at} by ${artifact.created_by.id}; sha256 ${artifact.sha256}`);
      }),
    );
  artifacts
    .command('download')
    .description("write an artifact's bytes to a file, or to standard output")
    .argument('<id>', 'the artifact (art_…)')
    .option('-o, --output <file>', 'the file to write (default: standard output)')
    .action(
      run(async (ctx, id: string, o: { output?: string }) => {
        const { client } = await ctx.connect();
        const artifact = await client.artifacts.get({ id, content: 'base64' });
        const bytes = Buffer.from(artifact.content ?? '', 'base64');
        if (o.output === undefined) return void process.stdout.write(bytes);
        await writeFile(o.output, bytes);
        ctx.out.note(`wrote ${bytes.length} bytes to ${o.output}`);
      }),
    );
  return artifacts;
}

/** The bytes as text when they are valid UTF-8, else undefined (they go as base64). */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function describe(a: Artifact | OutputOf<'artifacts_create'>): string {
  return `${a.id}${a.name ? ` ${a.name}` : ''}: ${a.content_type}, ${a.size} bytes${a.task_id ? `, on ${a.task_id}` : ''}`;
}
