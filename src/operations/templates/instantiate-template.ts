import { z } from 'zod';
import { renderTasks, resolveParameters, PARAMETER_VALUE_MAX, TEMPLATE_TASKS_MAX, type RenderedTask, type TemplateIssue, type TemplateParameter, type TemplateTask } from '../../domain/templates.ts';
import { BatonError } from '../../errors.ts';
import { findTemplate } from '../../store/templates.ts';
import { updateTask } from '../../store/tasks.ts';
import type { Tx } from '../../store/connection.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { resolveAssignee, resolveMentions } from '../shared/principals.ts';
import { createTask } from '../tasks/create-task.ts';
import { BLOCKERS_MAX, LABELS_MAX, taskPriority } from '../tasks/task-schema.ts';
import { invalid, templateId, templateNotFound } from './template-schema.ts';

const renderedTask = z.object({
  key: z.string(),
  id: z.string().nullable(),
  title: z.string(),
  description: z.string(),
  priority: taskPriority,
  labels: z.array(z.string()).max(LABELS_MAX),
  assignee: z.string().nullable(),
  parent: z.string().nullable(),
  blocked_by: z.array(z.string()).max(BLOCKERS_MAX),
  not_before: z.iso.datetime().nullable(),
  due_at: z.iso.datetime().nullable(),
  approval: z.boolean(),
});

/** Values for a template's parameters, by name. */
export const templateParams = z.record(z.string().max(40), z.union([z.string().max(PARAMETER_VALUE_MAX), z.number()]));

export const instantiationOutput = z.object({
  template_id: z.string(),
  template_version: z.int(),
  dry_run: z.boolean(),
  task_ids: z.record(z.string(), z.string()).describe('Task ids by template key.'),
  tasks: z.array(renderedTask).max(TEMPLATE_TASKS_MAX),
});

export const instantiateTemplate = defineOperation({
  name: 'templates_instantiate',
  summary: "Make a template's whole task graph at once, with values for its parameters: every task or none.",
  description: 'Answers the task ids by template key. `dry_run: true` answers the rendered graph and writes nothing (a preview).',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/templates/{id}/instantiate', successStatus: 201 },
  input: z.strictObject({
    id: templateId,
    params: templateParams.optional(),
    dry_run: z.boolean().default(false),
  }),
  output: instantiationOutput,
  async run(tx, ctx, input) {
    const row = await findTemplate(tx, input.id);
    if (!row) throw templateNotFound(input.id);
    const { values, issues } = resolveParameters(row.parameters as TemplateParameter[], input.params ?? {});
    if (issues.length > 0) throw invalid(issues, 'The parameters do not fit the template');
    const assignees = await resolvePrincipals(tx, row.parameters as TemplateParameter[], values);
    const tasks = renderTasks(row.tasks as TemplateTask[], values, assignees);
    const checked = tasks.map((task) => checkRendered(task));
    const problems = checked.flatMap((c) => c.issues);
    if (problems.length > 0) throw invalid(problems, 'The rendered tasks are not valid');
    const at = (offset: number | undefined) => (offset === undefined ? null : new Date(ctx.now.getTime() + offset * 1000));
    const rendered = tasks.map((t) => ({
      key: t.key,
      id: null as string | null,
      title: t.title,
      description: t.description,
      priority: t.priority as z.infer<typeof taskPriority>,
      labels: [...t.labels],
      assignee: t.assignee ?? null,
      parent: t.parent ?? null,
      blocked_by: [...t.blocked_by],
      not_before: at(t.not_before_s)?.toISOString() ?? null,
      due_at: at(t.due_s)?.toISOString() ?? null,
      approval: t.approval,
    }));
    if (input.dry_run) {
      for (const t of tasks) if (t.assignee !== undefined) await resolveAssignee(tx, t.assignee, `/tasks/${t.index}/assignee`);
      return { template_id: row.id, template_version: row.version, dry_run: true, task_ids: {}, tasks: rendered };
    }
    const ids: Record<string, string> = {};
    for (const [n, t] of tasks.entries()) {
      const made = await make(tx, ctx, t, ids);
      ids[t.key] = made;
      const entry = rendered[n];
      if (entry) entry.id = made;
    }
    ctx.emit({ type: 'template.instantiated', subject: row.id, data: { version: row.version, params: { ...values, ...assignees }, task_ids: ids } });
    return { template_id: row.id, template_version: row.version, dry_run: false, task_ids: ids, tasks: rendered };
  },
});

/**
 * Resolves each `principal` parameter's value, an id or a name (`@` allowed), to one principal
 * (unknown_principal at `/params/<name>` otherwise): `values` gets its name, for the texts; the
 * answer maps the parameter to its id, for `assignee`. An empty value stays empty (unassigned).
 */
async function resolvePrincipals(tx: Tx, parameters: readonly TemplateParameter[], values: Record<string, string | number>): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  for (const p of parameters) {
    const given = String(values[p.name] ?? '').trim().replace(/^@/, '');
    if (p.type !== 'principal' || given === '') continue;
    const [who] = await resolveMentions(tx, [given], `/params/${p.name}`);
    if (!who) continue;
    ids[p.name] = who.id;
    values[p.name] = who.name;
  }
  return ids;
}

/** A rendered task checked as tasks_create would check its fields; issues point into the template. */
function checkRendered(task: RenderedTask): { issues: TemplateIssue[] } {
  const parsed = createTask.input.safeParse({ title: task.title, description: task.description, priority: task.priority, labels: task.labels, ...(task.assignee === undefined ? {} : { assignee: task.assignee }) });
  if (parsed.success) return { issues: [] };
  return { issues: parsed.error.issues.map((issue) => ({ pointer: `/tasks/${task.index}/${issue.path.map(String).join('/')}`, detail: `task ${task.key}, rendered: ${issue.message}` })) };
}

/**
 * Creates one task through tasks_create's own run (so its parent, blocker and assignee checks and
 * events are those of any task), then moves an approval gate into review. A refusal names the task.
 */
async function make(tx: Tx, ctx: OperationContext, t: RenderedTask, ids: Readonly<Record<string, string>>): Promise<string> {
  const ref = (key: string) => ids[key] ?? key;
  const at = (offset: number | undefined) => (offset === undefined ? undefined : new Date(ctx.now.getTime() + offset * 1000));
  const input = {
    title: t.title,
    description: t.description,
    priority: t.priority as z.infer<typeof taskPriority>,
    labels: [...t.labels],
    blocked_by: t.blocked_by.map(ref),
    assignee: t.assignee,
    max_attempts: undefined,
    parent_id: t.parent === undefined ? undefined : ref(t.parent),
    not_before: at(t.not_before_s),
    due_at: at(t.due_s),
  };
  try {
    const task = await createTask.run(tx, ctx, input);
    if (t.approval) {
      await updateTask(tx, task.id, { status: 'in_review', updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
      ctx.emit({ type: 'task.status_changed', subject: task.id, data: { from: 'todo', to: 'in_review', reason: 'approval_gate' } });
    }
    return task.id;
  } catch (error) {
    if (!(error instanceof BatonError)) throw error;
    // The task's own pointers (`/assignee`) point into the template's task.
    const errors = Array.isArray(error.extra.errors) ? (error.extra.errors as { pointer: string }[]).map((e) => ({ ...e, pointer: `/tasks/${t.index}${e.pointer}` })) : undefined;
    throw new BatonError(error.code, `Template task ${t.key} (tasks/${t.index}): ${error.detail}`, { hint: error.hint, extra: { ...error.extra, ...(errors ? { errors } : {}), template_key: t.key }, headers: error.headers });
  }
}
