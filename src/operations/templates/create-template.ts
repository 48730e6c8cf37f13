import { z } from 'zod';
import { insertTemplate } from '../../store/templates.ts';
import { defineOperation } from '../define-operation.ts';
import { assertTemplate, templateDescription, templateName, templateOutput, templateParameters, templateTasks, toTemplate } from './template-schema.ts';

export const createTemplate = defineOperation({
  name: 'templates_create',
  summary: 'Save a template: a task graph with `{{parameter}}` placeholders, subtasks, blockers and gates, made at once by templates_instantiate.',
  description: 'Refused when a reference names no task or parameter, or `blocked_by` or `parent` makes a cycle. At most 100 tasks and 20 parameters.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/templates', successStatus: 201 },
  input: z.strictObject({ name: templateName, description: templateDescription.default(''), parameters: templateParameters.default([]), tasks: templateTasks }),
  output: templateOutput,
  version: (template) => template.version,
  async run(tx, ctx, input) {
    assertTemplate(input.parameters, input.tasks);
    const by = { id: ctx.actor.id, kind: ctx.actor.kind };
    const row = await insertTemplate(tx, {
      id: ctx.ids.make('tpl'),
      name: input.name,
      description: input.description,
      parameters: JSON.stringify(input.parameters),
      tasks: JSON.stringify(input.tasks),
      deleted_at: null,
      created_at: ctx.now,
      created_by_id: by.id,
      created_by_kind: by.kind,
      updated_at: ctx.now,
      updated_by_id: by.id,
      updated_by_kind: by.kind,
    });
    ctx.emit({ type: 'template.created', subject: row.id, data: { name: row.name, tasks: input.tasks.length, parameters: input.parameters.map((p) => p.name) } });
    return toTemplate(row);
  },
});
