import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { CliError, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';

interface Rendered {
  key: string;
  id: string | null;
  title: string;
  parent: string | null;
  blocked_by: string[];
  not_before: string | null;
  approval: boolean;
}

/** A template's members as templates_create takes them (its output leaves them untyped to keep the OpenAPI document small). */
interface Parameter {
  name: string;
  type: string;
  values?: string[];
  required: boolean;
  default?: string | number;
  description?: string;
}
interface TemplateTask {
  key: string;
  title: string;
  parent?: string;
  blocked_by: string[];
  not_before_s?: number;
  approval: boolean;
}

/**
 * `baton templates`: list, show, create from a JSON or YAML file, preview and instantiate with
 * `--param name=value` (repeatable). A preview is templates_instantiate with `dry_run`: the graph
 * rendered as an indented tree, blockers noted, nothing written.
 */
export function templatesCommand(run: Run): Command {
  const templates = new Command('templates').description('parametrised task graphs: save one, preview it, make all its tasks at once');
  templates
    .command('list', { isDefault: true })
    .description('list the templates')
    .action(
      run(async (ctx) => {
        const { client } = await ctx.connect();
        const page = await client.templates.list({ limit: 100 });
        if (ctx.out.json) return ctx.out.data(page);
        ctx.out.table(['ID', 'NAME', 'TASKS', 'PARAMETERS'], page.data.map((t) => [t.id, t.name, String(t.tasks.length), (t.parameters as unknown as Parameter[]).map((p) => p.name).join(', ')]));
      }),
    );
  templates
    .command('show')
    .description('show a template: its parameters and tasks')
    .argument('<id>', 'the template (tpl_…)')
    .action(
      run(async (ctx, id: string) => {
        const { client } = await ctx.connect();
        const template = await client.templates.get({ id });
        if (ctx.out.json) return ctx.out.data(template);
        ctx.out.line(`${template.name} (${template.id}, version ${template.version})`);
        for (const p of template.parameters as unknown as Parameter[]) ctx.out.line(`  --param ${p.name}=<${p.type === 'enum' ? (p.values ?? []).join('|') : p.type}>${p.default === undefined ? (p.required ? ' (required)' : '') : ` (default ${p.default})`}${p.description ? `  ${p.description}` : ''}`);
        for (const line of tree((template.tasks as unknown as TemplateTask[]).map((t) => ({ key: t.key, id: null, title: t.title, parent: t.parent ?? null, blocked_by: t.blocked_by, not_before: t.not_before_s === undefined ? null : `+${t.not_before_s}s`, approval: t.approval })))) ctx.out.line(line);
      }),
    );
  templates
    .command('create')
    .description('save a template from a JSON or YAML file ({name, description, parameters, tasks}; spec/templates.md)')
    .argument('<file>', 'the definition, .json, .yaml or .yml')
    .option('--idempotency-key <key>', 'a key to make a retry safe')
    .action(
      run(async (ctx, file: string, o: { idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const made = await client.templates.create((await readDefinition(file)) as never, ctx.write(o));
        if (ctx.out.json) return ctx.out.data(made);
        ctx.out.note(`Saved template ${made.id} (${made.tasks.length} tasks)`);
        ctx.out.line(made.id);
      }),
    );
  for (const [name, dryRun] of [['preview', true], ['instantiate', false]] as const) {
    templates
      .command(name)
      .description(dryRun ? 'render a template with parameters, writing nothing' : 'make every task of a template at once (or none); prints the task ids by key')
      .argument('<id>', 'the template (tpl_…)')
      .option('--param <name=value>', 'a parameter value (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
      .option('--idempotency-key <key>', 'a key to make a retry safe: the same key answers the same tasks')
      .action(
        run(async (ctx, id: string, o: { param?: string[]; idempotencyKey?: string }) => {
          const { client } = await ctx.connect();
          const made = await client.templates.instantiate({ id, params: params(o.param ?? []), dry_run: dryRun }, ctx.write(o));
          if (ctx.out.json) return ctx.out.data(made);
          for (const line of tree(made.tasks)) ctx.out.line(line);
          if (!dryRun) ctx.out.note(`Made ${Object.keys(made.task_ids).length} tasks from ${id}`);
        }),
      );
  }
  return templates;
}

/** `name=value` pairs as the params object; the server reads a number parameter's text as a number. */
export function params(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`--param must be name=value, got "${pair}"`, EXIT.usage);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

async function readDefinition(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new CliError(`Cannot read ${file}`, EXIT.usage);
  });
  try {
    if (/\.ya?ml$/i.test(file)) return (await import('yaml')).parse(text) as unknown;
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${file} is not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${error instanceof Error ? error.message : String(error)}`, EXIT.usage);
  }
}

/** The graph as an indented tree (subtasks under their parent), each line noting its blockers and gates. */
export function tree(tasks: readonly Rendered[]): string[] {
  const lines: string[] = [];
  const children = (parent: string | null) => tasks.filter((t) => t.parent === parent);
  const walk = (parent: string | null, depth: number) => {
    for (const t of children(parent)) {
      const notes = [t.blocked_by.length > 0 ? `blocked by ${t.blocked_by.join(', ')}` : '', t.approval ? 'approval gate' : '', t.not_before ? `not before ${t.not_before}` : ''].filter(Boolean);
      lines.push(`${'  '.repeat(depth)}- ${t.key}: ${t.title}${t.id ? ` (${t.id})` : ''}${notes.length > 0 ? `  [${notes.join('; ')}]` : ''}`);
      walk(t.key, depth + 1);
    }
  };
  walk(null, 0);
  return lines;
}
