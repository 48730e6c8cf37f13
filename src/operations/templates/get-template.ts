import { z } from 'zod';
import { findTemplate } from '../../store/templates.ts';
import { defineOperation } from '../define-operation.ts';
import { templateId, templateNotFound, templateOutput, toTemplate } from './template-schema.ts';

export const getTemplate = defineOperation({
  name: 'templates_get',
  summary: 'Read one template: its parameters and task graph.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/templates/{id}' },
  input: z.strictObject({ id: templateId }),
  output: templateOutput,
  version: (template) => template.version,
  async run(db, _ctx, input) {
    const row = await findTemplate(db, input.id);
    if (!row) throw templateNotFound(input.id);
    return toTemplate(row);
  },
});
