import { z } from 'zod';
import { PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import { listDirectory as listDirectoryRows, sharedSpellings } from '../../store/agents.ts';
import { latestEventId } from '../../store/events.ts';
import { agentId } from '../agents/agent-schema.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, listFilter, pageSchema, paginate } from '../shared/lists.ts';
import { mentionSpelling } from '../shared/principals.ts';

export const directoryEntry = z.object({
  id: z.string(),
  kind: z.enum(PRINCIPAL_KINDS),
  name: z.string(),
  handle: z.string().nullable().describe('Mention it as `@<handle>`; null: by id (`@agt_…`).'),
  disabled: z.boolean(),
});

/**
 * The workspace's names for every member of the team, agents and people (spec/identity.md, "The
 * directory"): what any caller that reads tasks needs to show the ids tasks, events and asks carry
 * as names. Only how to name each principal: no scopes, role, email or tokens (agents_list has them).
 */
export const listDirectory = defineOperation({
  name: 'directory_list',
  summary: "The workspace's people and agents by name; `ids` names those you hold ids of in one call.",
  kind: 'read',
  staleReads: true,
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/directory' },
  input: z.strictObject({
    // 60 ids joined by commas fit a list parameter's 2,000 characters (100 would not).
    ids: listFilter(z.array(agentId).max(60)).optional(),
    prefix: z.string().min(1).max(100).optional().describe('Of the name: any case, `_` for a space.'),
    kind: z.enum(PRINCIPAL_KINDS).optional(),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(directoryEntry),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('directory', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listDirectoryRows(db, { ids: input.ids, prefix: input.prefix, kind: input.kind, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('directory', row.id));
    const spellings = new Map(page.rows.map((row) => [row.id, mentionSpelling(row.name)]));
    const shared = await sharedSpellings(db, [...new Set([...spellings.values()].flatMap((s) => (s ? [s.toLowerCase()] : [])))]);
    const handle = (id: string) => {
      const spelling = spellings.get(id);
      return spelling && !shared.has(spelling.toLowerCase()) ? spelling : null;
    };
    const data = page.rows.map((row) => ({ id: row.id, kind: row.kind, name: row.name, handle: handle(row.id), disabled: row.disabled }));
    return { data, has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
