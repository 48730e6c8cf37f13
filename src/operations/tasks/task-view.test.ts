import { describe, expect, it } from 'vitest';
import { type Scope, SCOPES } from '../../domain/scopes.ts';
import { TASK_STATUSES } from '../../domain/task-status.ts';
import type { Principal } from '../../domain/principal.ts';
import type { TaskRow } from '../../store/tasks.ts';
import { project } from '../shared/lists.ts';
import { COMPACT_FIELDS, TASK_CORE } from './task-schema.ts';
import { nextActions, shapeTask, toListTask, toTask } from './task-view.ts';

const at = new Date('2026-11-24T12:00:00.000Z');

function principal(kind: 'human' | 'agent', scopes: readonly Scope[], toolAllowlist: string[] | null = null): Principal {
  return { id: `agt_${kind}`, kind, name: kind, scopes: new Set(scopes), toolAllowlist: toolAllowlist && new Set(toolAllowlist), tokenId: 'tok_1', machine: 'm', workspaceId: 'wsp_00000000000000000000000000' };
}

function row(status: string, over: Partial<TaskRow> = {}): TaskRow {
  return {
    id: 'tsk_01M877M07JHA1E0RG030VDB881',
    title: 'Ship it',
    description: 'All of it.',
    status,
    priority: 2,
    labels: ['a', 'b'],
    version: 7,
    created_at: at,
    created_by_id: 'agt_human',
    created_by_kind: 'human',
    updated_at: new Date(at.getTime() + 1000),
    updated_by_id: 'agt_agent',
    updated_by_kind: 'agent',
    lease_id: null,
    lease_holder_id: null,
    lease_holder_kind: null,
    lease_expires_at: null,
    lease_epoch: 3,
    blocked_by: [],
    deleted_at: null,
    assignee_id: null,
    assignee_kind: null,
    handoff: null,
    changes_requested_id: null,
    attempts: 0,
    max_attempts: null,
    max_cost_micros: null,
    max_cost_currency: null,
    not_before: null,
    blocked_reason: null,
    failures: [],
    parent_id: null,
    due_at: null,
    overdue_at: null,
    open_asks: 0,
    review_overdue_at: null,
    overdue_asks: 0,
    archived_at: null,
    review_overdue: false,
    waiting_on: [],
    artifacts: [],
    child_counts: {},
    reservations: null,
    ...over,
  };
}

const handedIn = { handoff: { summary: 'Done.', artifacts: [], by: { id: 'agt_agent', kind: 'agent' as const }, at: at.toISOString() } };
const leased = { lease_id: 'lse_1', lease_holder_id: 'agt_agent', lease_holder_kind: 'agent' as const, lease_expires_at: new Date(at.getTime() + 60_000) };
const rows = TASK_STATUSES.flatMap((status) => [
  row(status),
  row(status, { open_asks: 2 }),
  row(status, { reservations: [{ mode: 'shared', resource: 'staging-db' }, { paths: ['src/**'], repo: 'acme/api' }] }),
  row(status, leased),
  row(status, { blocked_by: ['tsk_x'], waiting_on: ['tsk_x'] }),
  row(status, { artifacts: [{ id: 'art_1', size: 3, content_type: 'text/plain', sha256: 'ab', name: 'notes.txt' }] }),
  row(status, handedIn),
  row(status, { not_before: new Date(at.getTime() + 30_000) }),
  row(status, { assignee_id: 'agt_someone', assignee_kind: 'agent' }),
]);
const callers = [
  principal('human', SCOPES),
  principal('agent', SCOPES),
  principal('agent', ['tasks:read', 'tasks:write', 'tasks:claim']),
  principal('agent', ['tasks:read', 'tasks:write', 'tasks:claim'], ['tasks_update']),
  principal('agent', ['tasks:read']),
];

/** The JSON of a task with each offered action's fresh Idempotency-Key blanked (they differ on every render). */
function withoutKeys(task: object): string {
  return JSON.stringify(task).replace(/"Idempotency-Key":"[^"]*"/g, '"Idempotency-Key":""');
}

describe('shapeTask compact views', () => {
  // A single task's default view is built directly, not projected from the full object: it must say exactly what the projection says, in its key order.
  it('equals the full task projected to COMPACT_FIELDS, for every status, lease, blocker and caller', () => {
    for (const r of rows) {
      for (const caller of callers) {
        expect(withoutKeys(shapeTask(r, caller, { view: 'compact', at }))).toBe(withoutKeys(project(toTask(r, caller, { at }), COMPACT_FIELDS, TASK_CORE)));
      }
    }
  });

  it('names a tombstone as such', () => {
    const deleted = row('cancelled', { deleted_at: at });
    expect(shapeTask(deleted, callers[0] as Principal, { view: 'compact', at })).toMatchObject({ deleted_at: at.toISOString(), legal_transitions: [], next_actions: [] });
  });
});

describe('toListTask', () => {
  // A list page in the default view reads only some columns and builds the item directly: it must say exactly what projecting the whole row says, in its key order.
  it('equals shapeTask of the whole row as a list item, for every status, lease, blocker, parent, due date, failed attempt, assignee and tombstone', () => {
    const due = { due_at: new Date(at.getTime() - 60_000) };
    const listRows = [
      ...rows,
      ...TASK_STATUSES.flatMap((status) => [
        row(status, { parent_id: 'tsk_parent', child_counts: { todo: 2 } }),
        row(status, due),
        row(status, { due_at: new Date(at.getTime() + 60_000) }),
        row(status, { ...due, overdue_at: at }),
        row(status, { deleted_at: at }),
        row(status, { ...due, deleted_at: at, parent_id: 'tsk_parent' }),
        row(status, { attempts: 2, max_attempts: 3, not_before: new Date(at.getTime() + 30_000) }),
        row(status, { attempts: 3, max_attempts: 3, blocked_reason: 'attempts_exhausted' }),
        row(status, { not_before: due.due_at }),
        row(status, { assignee_id: 'agt_someone', assignee_kind: 'agent' }),
        row(status, { assignee_id: 'agt_someone', assignee_kind: 'human', deleted_at: at }),
      ]),
    ];
    for (const r of listRows) {
      for (const now of [at, undefined]) {
        for (const caller of callers) expect(JSON.stringify(toListTask(r, now))).toBe(JSON.stringify(shapeTask(r, caller, { view: 'compact', now, at }, true)));
      }
    }
  });
});

describe('nextActions', () => {
  const reviewer = (id: string) => ({ ...principal('agent', SCOPES), id });
  const offered = (r: TaskRow, caller: Principal) =>
    nextActions(r, caller, at).map((a) => {
      const decision = a.body?.['decision'];
      return `${a.operation}${typeof decision === 'string' ? `:${decision}` : ''}${a.fill ? `[${a.fill.join()}]` : ''}`;
    });

  it('offer the lease holder its heartbeat and the hand-in with a summary to write', () => {
    expect(offered(row('in_progress', leased), reviewer('agt_agent'))).toEqual(['leases_heartbeat', 'tasks_hand_in[summary]']);
  });

  it('offer the claim of a todo task only when it would go through now: no not_before ahead, no other assignee; an agent claims other work instead', () => {
    const agent = reviewer('agt_agent');
    expect(offered(row('todo'), agent)).toEqual(['tasks_claim']);
    expect(offered(row('todo', { not_before: new Date(at.getTime() - 1000) }), agent)).toEqual(['tasks_claim']);
    expect(offered(row('todo', { assignee_id: 'agt_agent', assignee_kind: 'agent' }), agent)).toEqual(['tasks_claim']);
    expect(offered(row('todo', { not_before: new Date(at.getTime() + 30_000) }), agent)).toEqual(['tasks_claim_next']);
    expect(offered(row('todo', { assignee_id: 'agt_someone', assignee_kind: 'agent' }), agent)).toEqual(['tasks_claim_next']);
    expect(offered(row('todo', { waiting_on: ['tsk_x'] }), agent)).toEqual(['tasks_claim_next']);
    expect(offered(row('todo', { not_before: new Date(at.getTime() + 30_000) }), principal('human', SCOPES))).toEqual([]);
  });

  it('offer a task with open asks the read of them, first, to whoever may read it', () => {
    const asking = row('in_progress', { ...leased, open_asks: 1 });
    expect(offered(asking, reviewer('agt_agent'))).toEqual(['asks_list', 'leases_heartbeat', 'tasks_hand_in[summary]']);
    expect(offered(asking, principal('human', SCOPES))[0]).toBe('asks_list');
    expect(nextActions(asking, principal('human', SCOPES), at)[0]).toEqual({ operation: 'asks_list', method: 'GET', href: `/api/v1/asks?task_id=${asking.id}&status=open` });
    expect(offered(row('in_progress', leased), reviewer('agt_agent'))).not.toContain('asks_list');
  });

  it('offer work in review its two decisions, request-changes with a comment to write, to anyone who may review but the principal that handed it in', () => {
    const review = row('in_review', handedIn);
    expect(offered(review, reviewer('agt_other'))).toEqual(['tasks_review:approve', 'tasks_review:request_changes[comment]', 'tasks_claim_next']);
    expect(offered(review, principal('human', SCOPES))).toEqual(['tasks_review:approve', 'tasks_review:request_changes[comment]']);
    expect(offered(review, reviewer('agt_agent'))).toEqual(['tasks_claim_next']);
    // A human without tasks:review gets the move to done, as before.
    expect(offered(review, principal('human', SCOPES.filter((s) => s !== 'tasks:review')))).toEqual(['tasks_update']);
  });
});
