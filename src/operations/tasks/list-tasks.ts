import { hash } from 'node:crypto';
import { z } from 'zod';
import { idPattern } from '../../ids.ts';
import { TASK_STATUSES } from '../../domain/task-status.ts';
import { latestEventId } from '../../store/events.ts';
import { listTasks as listTaskRows, searchTermCount, type TaskSearch } from '../../store/task-list.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../store/schema.ts';
import { BatonError } from '../../errors.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, listFilter, namesFilter, pageSchema, paginate, sinceParam, sinceSeq, viewParam } from '../shared/lists.ts';
import { shapeTask, type TaskShape, toListTask } from './task-view.ts';
import { TASK_FIELDS, taskLabels, taskOutput, taskRef } from './task-schema.ts';

/** Longest `q`, in characters. */
const SEARCH_MAX = 200;

export const listTasks = defineOperation({
  name: 'tasks_list',
  summary: 'List tasks, newest first, in bounded pages; filter by status, labels and assignee, or get only what changed since an event.',
  kind: 'read',
  staleReads: true,
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'work',
  http: { method: 'GET', path: '/tasks' },
  input: z.strictObject({
    status: namesFilter(TASK_STATUSES, 'statuses'),
    labels: listFilter(taskLabels).optional().describe('Labels a task must all carry.'),
    assignee: z
      .string()
      .regex(new RegExp(`^(me|none|${idPattern('agt').replace(/^\^|\$$/g, '')})$`), 'assignee is me, none, or a principal id (agt_…)')
      .optional()
      .describe('`me`: tasks assigned to you; `none`: unassigned tasks; `agt_…`: tasks assigned to that principal.'),
    blocked_reason: z.enum(['attempts_exhausted']).optional().describe('`attempts_exhausted`: the dead-letter view, tasks that ran out of attempts.'),
    parent: taskRef('parent', 'none').optional().describe('`none` or a parent task id.'),
    archived: z.enum(['only', 'any']).optional().describe('`only`/`any`: list archived tasks (else only in `since` deltas).'),
    // Kept short: every byte here is in each agent's tools/list (test/agent/budgets.test.ts).
    id_prefix: z
      .string()
      .regex(/^[0-9A-Z]{6,26}$/i, 'id_prefix is 6 to 26 characters of the ULID after tsk_')
      .transform((prefix) => prefix.toUpperCase())
      .optional()
      .describe('Ids starting tsk_ + this (6+ ULID characters).'),
    q: z.string().max(SEARCH_MAX, `q is limited to ${SEARCH_MAX} characters`).optional().describe('Ranked text search.'),
    cursor: cursorParam,
    limit: limitParam,
    view: viewParam,
    fields: namesFilter(TASK_FIELDS, 'task fields'),
    since: sinceParam,
  }),
  output: pageSchema(taskOutput),
  async run(db, ctx, input) {
    // A search's cursor holds its rank, a list's an id: either is checked before anything reaches SQL.
    const position = ctx.cursors.decode(input.q === undefined ? 'tasks' : 'task_search', input.cursor);
    // Read the sync cursor first: a write landing during the list shows again next time, never goes missing.
    const syncCursor = await latestEventId(db);
    let changedAfterSeq: string | undefined;
    if (input.since) {
      changedAfterSeq = await sinceSeq(db, input.since);
    }
    const search = input.q === undefined ? undefined : await searchOf(db, input.q, position);
    const query = {
      statuses: input.status,
      labels: input.labels,
      assignee: input.assignee === 'me' ? ctx.actor.id : input.assignee === 'none' ? null : input.assignee,
      blockedReason: input.blocked_reason,
      parent: input.parent === 'none' ? null : input.parent,
      idPrefix: input.id_prefix === undefined ? undefined : `tsk_${input.id_prefix}`,
      // A delta carries archiving as it carries deletes, so a client's copy drops an archived task.
      archived: input.archived ?? (input.since ? ('any' as const) : ('hide' as const)),
      changedAfterSeq,
      beforeId: search ? undefined : position,
      limit: input.limit,
    };
    const cursorAfter = (row: { id: string; search_rank?: string }) =>
      search ? ctx.cursors.encode('task_search', `${row.search_rank ?? '0'} ${row.id} ${searchDigest(search.q)}`) : ctx.cursors.encode('tasks', row.id);
    const shapePage = <R extends { id: string; search_rank?: string }>(rows: R[], shape: (row: R) => TaskShape) => {
      const page = paginate(rows, input.limit, cursorAfter);
      return { data: page.rows.map(shape), has_more: page.has_more, next_cursor: page.next_cursor };
    };
    // The default view reads only the columns it shows; `view=full` or `fields` read whole rows.
    const page =
      input.view === 'compact' && !input.fields
        ? shapePage(await listTaskRows(db, { ...query, columns: 'list' }, search), (row) => toListTask(row, ctx.now))
        : shapePage(await listTaskRows(db, { ...query, columns: 'full' }, search), (row) => shapeTask(row, ctx.actor, { ...input, now: ctx.now, at: ctx.now }, true));
    return {
      ...page,
      sync_cursor: syncCursor,
    };
  },
});

/**
 * A search's terms and position. websearch_to_tsquery never fails on syntax, so the only bad query
 * is one with no terms left (stop words, punctuation): a 400 naming `q`, never an empty page.
 */
async function searchOf(db: Kysely<DB>, q: string, position: string | undefined): Promise<TaskSearch> {
  if ((await searchTermCount(db, q)) === 0) {
    throw new BatonError('invalid_search', `q ${JSON.stringify(q)} has no words to search for once stop words and punctuation are dropped.`, {
      extra: { errors: [{ pointer: '/q', detail: 'no searchable words', location: 'query' }] },
    });
  }
  if (position === undefined) return { q, after: undefined };
  const [rank = '0', id = '', digest] = position.split(' ');
  if (digest !== searchDigest(q)) {
    throw new BatonError('invalid_parameter', 'cursor belongs to a search for another q: ranks differ from one query to the next.', {
      hint: 'Pass the same q as the page that returned this cursor, or omit cursor to start the new search from its first page.',
      extra: { errors: [{ pointer: '/cursor', detail: 'issued for a different q', location: 'query' }] },
    });
  }
  return { q, after: { rank, id } };
}

/** Binds a search cursor to its query: 16 hex characters of the SHA-256 of `q`. */
function searchDigest(q: string): string {
  return hash('sha256', q).slice(0, 16);
}
