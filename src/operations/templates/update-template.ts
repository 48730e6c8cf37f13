import { z } from 'zod';
import type { TemplateParameter, TemplateTask } from '../../domain/templates.ts';
import { updateTemplate as writeTemplate } from '../../store/templates.ts';
import { defineOperation } from '../define-operation.ts';
import { assertTemplate, lockChangeableTemplate, templateDescription, templateId, templateName, templateOutput, templateParameters, templateTasks, toTemplate } from './template-schema.ts';

export const updateTemplate = defineOperation({
  name: 'templates_update',
  summary: 'Change a template: its name, description, parameters or tasks (each replaced whole). Send If-Match.',
  description: 'Checked as on create. Tasks made from it before are not touched.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'PATCH', path: '/templates/{id}' },
  input: z.strictObject({
    id: templateId,
    name: templateName.optional(),
    description: templateDescription.optional(),
    parameters: templateParameters.optional(),
    tasks: templateTasks.optional(),
  }),
  output: templateOutput,
  version: (template) => template.version,
  async run(tx, ctx, input) {
    const row = await lockChangeableTemplate(tx, ctx, input.id);
    const parameters = input.parameters ?? (row.parameters as TemplateParameter[]);
    const tasks = input.tasks ?? (row.tasks as TemplateTask[]);
    assertTemplate(parameters, tasks);
    const changed = [input.name === undefined ? [] : ['name'], input.description === undefined ? [] : ['description'], input.parameters === undefined ? [] : ['parameters'], input.tasks === undefined ? [] : ['tasks']].flat();
    const updated = await writeTemplate(tx, row.id, {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.parameters === undefined ? {} : { parameters: JSON.stringify(input.parameters) }),
      ...(input.tasks === undefined ? {} : { tasks: JSON.stringify(input.tasks) }),
      updated_at: ctx.now,
      updated_by_id: ctx.actor.id,
      updated_by_kind: ctx.actor.kind,
    });
    ctx.emit({ type: 'template.updated', subject: row.id, data: { changed } });
    return toTemplate(updated);
  },
});
