import { describe, expect, it } from 'vitest';
import { failAttempt } from './attempts.ts';

const now = new Date('2026-11-25T00:00:00.000Z');
const defaults = { maxAttempts: 3, backoffS: [30, 300] };

describe('failAttempt', () => {
  it('backs off by the schedule, its last entry repeating, until the attempts run out', () => {
    expect(failAttempt({ attempts: 0, max_attempts: 5 }, defaults, now)).toEqual({ attempts: 1, maxAttempts: 5, exhausted: false, notBefore: new Date('2026-11-25T00:00:30.000Z') });
    expect(failAttempt({ attempts: 1, max_attempts: 5 }, defaults, now).notBefore).toEqual(new Date('2026-11-25T00:05:00.000Z'));
    expect(failAttempt({ attempts: 3, max_attempts: 5 }, defaults, now).notBefore).toEqual(new Date('2026-11-25T00:05:00.000Z'));
    expect(failAttempt({ attempts: 4, max_attempts: 5 }, defaults, now)).toEqual({ attempts: 5, maxAttempts: 5, exhausted: true, notBefore: null });
  });

  it('uses the configured default when the task has no limit of its own', () => {
    expect(failAttempt({ attempts: 2, max_attempts: null }, defaults, now).exhausted).toBe(true);
    expect(failAttempt({ attempts: 1, max_attempts: null }, defaults, now).exhausted).toBe(false);
  });
});
