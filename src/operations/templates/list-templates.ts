import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listTemplates as listTemplateRows } from '../../store/templates.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { templateOutput, toTemplate } from './template-schema.ts';

export const listTemplates = defineOperation({
  name: 'templates_list',
  summary: 'List templates, oldest first.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/templates' },
  input: z.strictObject({ cursor: cursorParam, limit: limitParam }),
  output: pageSchema(templateOutput),
  async run(db, ctx, input) {
    const afterId = ctx.cursors.decode('templates', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listTemplateRows(db, { afterId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('templates', row.id));
    return { data: page.rows.map(toTemplate), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
