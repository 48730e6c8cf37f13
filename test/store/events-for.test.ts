import { afterAll, beforeAll, expect, it } from 'vitest';
import { addressedTo, type ConcernedEvent, eventKeys } from '../../src/domain/event-concerns.ts';
import { createIds } from '../../src/ids.ts';
import { insertAgent } from '../../src/store/agents.ts';
import type { Database } from '../../src/store/database.ts';
import { appendEvents } from '../../src/store/events.ts';
import { eventsFor } from '../../src/store/inbox-events.ts';
import { freshDatabase } from '../harness.ts';

/**
 * The inbox's SQL (`eventsFor`) and the filtered stream's predicate (`addressedTo`) define "events
 * for a principal" twice; over a table of events that hit and miss every clause, they select the same.
 */

let database: Database;
const ids = createIds();
const me = ids.make('agt');
const other = ids.make('agt');
const task = ids.make('tsk');

beforeAll(async () => {
  database = (await freshDatabase()).database;
  const by = { created_at: new Date(), created_by_id: 'system', created_by_kind: 'system' };
  await database.db.transaction().execute(async (tx) => {
    await insertAgent(tx, { id: me, name: 'me', kind: 'human', role: 'member', scopes: [], tool_allowlist: null, ...by });
    await insertAgent(tx, { id: other, name: 'other', kind: 'agent', scopes: [], tool_allowlist: null, ...by });
  });
});
afterAll(() => database.close());

/** [label, event, addressed to `me`] */
const TABLE: [string, ConcernedEvent, boolean][] = [
  ['ask to me', { type: 'ask.created', subject: task, actor_id: other, data: { to: me, asked_by: other } }, true],
  ['ask to me by me', { type: 'ask.created', subject: task, actor_id: me, data: { to: me, asked_by: me } }, true],
  ['ask to another', { type: 'ask.created', subject: task, actor_id: other, data: { to: other, asked_by: other } }, false],
  ['ask to my role', { type: 'ask.created', subject: task, actor_id: other, data: { to: 'role:member', asked_by: other } }, true],
  ['ask to my role by me', { type: 'ask.created', subject: task, actor_id: me, data: { to: 'role:member', asked_by: me } }, false],
  ['ask to another role', { type: 'ask.created', subject: task, actor_id: other, data: { to: 'role:admin', asked_by: other } }, false],
  ['ask escalated to me', { type: 'ask.escalated', subject: task, actor_id: 'system', data: { to: me, asked_by: other } }, true],
  ['ask escalated to my role', { type: 'ask.escalated', subject: task, actor_id: 'system', data: { to: 'role:member', asked_by: other } }, true],
  ['my ask answered', { type: 'ask.answered', subject: task, actor_id: other, data: { asked_by: me, to: other } }, true],
  ['my ask answered by me', { type: 'ask.answered', subject: task, actor_id: me, data: { asked_by: me, to: me } }, false],
  ['my ask defaulted', { type: 'ask.defaulted', subject: task, actor_id: 'system', data: { asked_by: me } }, true],
  ['another ask answered', { type: 'ask.answered', subject: task, actor_id: me, data: { asked_by: other } }, false],
  ['my ask cancelled', { type: 'ask.cancelled', subject: task, actor_id: other, data: { asked_by: me } }, false],
  ['mention of me', { type: 'comment.mentioned', subject: me, actor_id: other, data: { task_id: task } }, true],
  ['mention of me by me', { type: 'comment.mentioned', subject: me, actor_id: me, data: { task_id: task } }, false],
  ['mention of another', { type: 'comment.mentioned', subject: other, actor_id: me, data: { task_id: task } }, false],
  ['changes requested of me', { type: 'task.changes_requested', subject: task, actor_id: other, data: { to: { id: me, kind: 'human' } } }, true],
  ['changes requested of another', { type: 'task.changes_requested', subject: task, actor_id: me, data: { to: { id: other, kind: 'agent' } } }, false],
  ['my hand-in approved', { type: 'task.status_changed', subject: task, actor_id: other, data: { from: 'in_review', to: 'done', handed_in_by: me } }, true],
  ['my hand-in approved by me', { type: 'task.status_changed', subject: task, actor_id: me, data: { from: 'in_review', to: 'done', handed_in_by: me } }, false],
  ['a status change', { type: 'task.status_changed', subject: task, actor_id: other, data: { from: 'todo', to: 'in_progress' } }, false],
  ['assigned to me', { type: 'task.assigned', subject: task, actor_id: other, data: { from: null, to: { id: me, kind: 'human' } } }, true],
  ['assigned to me by me', { type: 'task.assigned', subject: task, actor_id: me, data: { from: null, to: { id: me, kind: 'human' } } }, false],
  ['unassigned', { type: 'task.assigned', subject: task, actor_id: other, data: { from: { id: me, kind: 'human' }, to: null } }, false],
  ['to as an id of an object type', { type: 'task.assigned', subject: task, actor_id: other, data: { to: me } }, false],
  ['claimed', { type: 'task.claimed', subject: task, actor_id: other, data: { lease_id: 'lse_1' } }, false],
  ['comment on a task', { type: 'comment.created', subject: task, actor_id: other, data: { comment_id: 'cmt_1', body: me } }, false],
];

it('eventsFor (SQL) selects exactly the events addressedTo (JS) holds addressed to the principal', async () => {
  const rows = TABLE.map(([, event]) => ({ ...event, id: ids.make('evt'), actor_kind: event.actor_id === 'system' ? 'system' : 'agent', token_id: null, machine: null, idempotency_key: null, created_at: new Date() }));
  await database.db.transaction().execute((tx) => appendEvents(tx, rows));
  const predicate = rows.filter((row) => addressedTo(row, { id: me, role: 'member' })).map((row) => row.id);
  const expected = rows.filter((_, i) => TABLE[i]?.[2]).map((row) => row.id);
  expect(predicate).toEqual(expected);
  // On a shared PostgreSQL another test's open transaction holds new events back from cursor reads for a while.
  const selected = () => eventsFor(database.db, me, '0', String(2n ** 62n), 1000).then((found) => found.map((row) => row.id));
  await expect.poll(selected, { timeout: 30_000 }).toEqual(expected);
  // And the tail routes each one addressed to me by a key of mine (src/domain/event-concerns.ts, `interestKeys`).
  for (const row of rows.filter((r) => addressedTo(r, { id: me, role: 'member' }))) expect(eventKeys(row).some((key) => key === me || key === 'role:member')).toBe(true);
});
