import { describe, expect, it } from 'vitest';
import {
  illegalTransitionHint,
  isLegalTransition,
  TASK_STATUSES,
  type TaskStatus,
  TRANSITIONS,
  transitionGuard,
  transitionVia,
} from './task-status.ts';

/** DESIGN.md §4, written out by hand: the table must say exactly this. */
const DESIGNED: readonly (readonly [TaskStatus, TaskStatus])[] = [
  ['todo', 'in_progress'],
  ['todo', 'blocked'],
  ['todo', 'cancelled'],
  ['in_progress', 'in_review'],
  ['in_progress', 'blocked'],
  ['in_progress', 'cancelled'],
  ['in_progress', 'todo'],
  ['in_review', 'done'],
  ['in_review', 'in_progress'],
  ['in_review', 'cancelled'],
  ['blocked', 'todo'],
  ['blocked', 'cancelled'],
  ['done', 'todo'],
  ['cancelled', 'todo'],
];

const pairs = TASK_STATUSES.flatMap((from) => TASK_STATUSES.map((to) => [from, to] as const));
const legalPairs = TASK_STATUSES.flatMap((from) => TRANSITIONS[from].map((to) => [from, to] as const));

describe('the transition table', () => {
  it('has an entry for every status and no other key', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...TASK_STATUSES].sort());
  });

  it('lists only valid statuses as targets, each once, never the status itself', () => {
    for (const from of TASK_STATUSES) {
      const targets = TRANSITIONS[from];
      for (const to of targets) expect(TASK_STATUSES).toContain(to);
      expect(new Set(targets).size).toBe(targets.length);
      expect(targets).not.toContain(from);
    }
  });

  it('is exactly the table of DESIGN.md §4', () => {
    const key = ([from, to]: readonly [TaskStatus, TaskStatus]) => `${from}>${to}`;
    expect(legalPairs.map(key).sort()).toEqual(DESIGNED.map(key).sort());
  });

  it('never moves in_progress straight to done', () => {
    expect(TRANSITIONS.in_progress).not.toContain('done');
    expect(isLegalTransition('in_progress', 'done')).toBe(false);
  });

  it('isLegalTransition agrees with the table for every pair', () => {
    for (const [from, to] of pairs) expect(isLegalTransition(from, to), `${from}>${to}`).toBe(TRANSITIONS[from].includes(to));
  });
});

describe('transitionVia', () => {
  it('routes todo→in_progress through a claim and in_progress→todo through a release', () => {
    expect(transitionVia('todo', 'in_progress')).toBe('tasks_claim');
    expect(transitionVia('in_progress', 'todo')).toBe('leases_release');
  });

  it('routes every other legal move through tasks_update', () => {
    const special = new Set(['todo>in_progress', 'in_progress>todo']);
    for (const [from, to] of legalPairs) {
      if (special.has(`${from}>${to}`)) continue;
      expect(transitionVia(from, to), `${from}>${to}`).toBe('tasks_update');
    }
  });
});

describe('transitionGuard', () => {
  it('lets a human or a reviewer finish a review', () => {
    expect(transitionGuard('in_review', 'done')).toBe('human_or_reviewer');
    expect(transitionGuard('in_review', 'in_progress')).toBe('human_or_reviewer');
  });

  it('lets only a human reopen done or cancelled work', () => {
    expect(transitionGuard('done', 'todo')).toBe('human');
    expect(transitionGuard('cancelled', 'todo')).toBe('human');
  });

  it('lets anyone with the scope make every other legal move', () => {
    const guarded = new Set(['in_review>done', 'in_review>in_progress', 'done>todo', 'cancelled>todo']);
    for (const [from, to] of legalPairs) {
      if (guarded.has(`${from}>${to}`)) continue;
      expect(transitionGuard(from, to), `${from}>${to}`).toBe('anyone');
    }
  });
});

describe('illegalTransitionHint', () => {
  it('tells an agent finishing work to open a pull request and move to in_review', () => {
    const hint = illegalTransitionHint('in_progress', 'done');
    expect(hint).toMatch(/pull request/i);
    expect(hint).toContain('in_review');
  });

  it('names every legal target for other illegal moves', () => {
    for (const [from, to] of pairs) {
      if (isLegalTransition(from, to) || (from === 'in_progress' && to === 'done')) continue;
      const hint = illegalTransitionHint(from, to);
      for (const legal of TRANSITIONS[from]) expect(hint, `${from}>${to}`).toContain(`\`${legal}\``);
    }
  });
});
