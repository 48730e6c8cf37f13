import { describe, expect, it } from 'vitest';
import { type Concerned, type ConcernedEvent, concerns, eventKeys, interestKeys, type TaskTie, trackTasks } from './event-concerns.ts';

const me = 'agt_me';
const other = 'agt_other';
const t1 = 'tsk_1';
const ev = (type: string, subject: string, actor_id: string, data: Record<string, unknown> = {}): ConcernedEvent => ({ type, subject, actor_id, data });

/** Runs events through one principal's filter as a stream does: decide with the tasks before the event, then track. */
function run(events: readonly ConcernedEvent[], tasks = new Map<string, TaskTie>()) {
  const who: Concerned = { id: me, role: null, tasks };
  const taken: ConcernedEvent[] = [];
  for (const event of events) {
    // Every event the filter takes or tracks names one of its keys, so the tail's index routes it here.
    const before = new Map([...tasks].map(([id, tie]) => [id, { ...tie }]));
    const relevant = concerns(event, who);
    trackTasks(tasks, event, me);
    const changed = JSON.stringify([...before]) !== JSON.stringify([...tasks]);
    if (relevant || changed) expect(eventKeys(event).some((key) => interestKeys({ ...who, tasks: before }).has(key)), `${event.type} must be routed`).toBe(true);
    if (relevant) taken.push(event);
  }
  return { taken: taken.map((e) => `${e.type} by ${e.actor_id}`), tasks };
}

describe('concerns and trackTasks', () => {
  it('follows a task from its claim by me to its release, taking only what others do to it meanwhile', () => {
    const { taken, tasks } = run([
      ev('task.updated', t1, other),
      ev('task.claimed', t1, me, { lease_id: 'l1' }),
      ev('lease.renewed', t1, me),
      ev('comment.created', t1, other, { comment_id: 'c1' }),
      ev('comment.created', t1, me, { comment_id: 'c2' }),
      ev('lease.expiring', t1, 'system'),
      ev('task.updated', t1, other),
      ev('lease.released', t1, me),
      ev('task.updated', t1, other),
    ]);
    expect(taken).toEqual(['comment.created by agt_other', 'lease.expiring by system', 'task.updated by agt_other']);
    expect(tasks.size).toBe(0);
  });

  it('keeps an assigned task after its lease ends, until it is assigned to another or done', () => {
    const { taken, tasks } = run([
      ev('task.assigned', t1, other, { from: null, to: { id: me, kind: 'agent' } }),
      ev('task.claimed', t1, me),
      ev('lease.expired', t1, 'system', { holder_id: me }),
      ev('task.status_changed', t1, 'system', { from: 'in_progress', to: 'todo' }),
      ev('task.assigned', t1, other, { from: { id: me }, to: { id: other, kind: 'agent' } }),
      ev('task.updated', t1, other),
    ]);
    expect(taken).toEqual(['task.assigned by agt_other', 'lease.expired by system', 'task.status_changed by system', 'task.assigned by agt_other']);
    expect(tasks.size).toBe(0);
  });

  it('takes the re-claim a reviewer writes for me, and drops a task once done', () => {
    const { taken, tasks } = run([
      ev('task.claimed', t1, other, { holder_id: me, reason: 'changes_requested' }),
      ev('task.updated', t1, other),
      ev('task.status_changed', t1, other, { from: 'in_review', to: 'done' }),
      ev('task.updated', t1, other),
    ]);
    expect(taken).toEqual(['task.claimed by agt_other', 'task.updated by agt_other', 'task.status_changed by agt_other']);
    expect(tasks.size).toBe(0);
  });

  it('ignores what happens to tasks that are not mine and events of other kinds about mine', () => {
    const { taken } = run([ev('task.claimed', 'tsk_2', other), ev('ask.answered', t1, other, { asked_by: other }), ev('run.logged', t1, other)], new Map([[t1, { holds: true, assigned: false }]]));
    expect(taken).toEqual([]);
  });
});
