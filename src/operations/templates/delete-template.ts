import { z } from 'zod';
import { updateTemplate } from '../../store/templates.ts';
import { defineOperation } from '../define-operation.ts';
import { lockChangeableTemplate, templateId, templateOutput, toTemplate } from './template-schema.ts';

export const deleteTemplate = defineOperation({
  name: 'templates_delete',
  summary: 'Delete a template; the tasks made from it stay.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'DELETE', path: '/templates/{id}' },
  input: z.strictObject({ id: templateId }),
  output: templateOutput,
  async run(tx, ctx, input) {
    const row = await lockChangeableTemplate(tx, ctx, input.id);
    const deleted = await updateTemplate(tx, row.id, { deleted_at: ctx.now, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'template.deleted', subject: row.id, data: { name: row.name } });
    return toTemplate(deleted);
  },
});
