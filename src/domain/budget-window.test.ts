import { describe, expect, it } from 'vitest';
import { budgetState, budgetWindow } from './budget-window.ts';

const iso = (w: { start: Date; resetsAt: Date | null }) => [w.start.toISOString(), w.resetsAt?.toISOString() ?? null];

describe('budget windows', () => {
  it('are calendar days, ISO weeks and months in UTC', () => {
    const at = new Date('2026-11-28T23:59:59.999Z'); // a Saturday
    expect(iso(budgetWindow('day', at))).toEqual(['2026-11-28T00:00:00.000Z', '2026-11-29T00:00:00.000Z']);
    expect(iso(budgetWindow('week', at))).toEqual(['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z']);
    expect(iso(budgetWindow('month', at))).toEqual(['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z']);
  });

  it('a week starts on Monday, also from a Sunday and across a year; December rolls into January', () => {
    expect(iso(budgetWindow('week', new Date('2027-01-03T10:00:00Z')))).toEqual(['2026-12-28T00:00:00.000Z', '2027-01-04T00:00:00.000Z']);
    expect(iso(budgetWindow('week', new Date('2026-11-30T00:00:00Z')))).toEqual(['2026-11-30T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
    expect(iso(budgetWindow('month', new Date('2026-12-31T12:00:00Z')))).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('a lifetime window never resets', () => {
    expect(iso(budgetWindow('lifetime', new Date('2026-11-28T10:00:00Z')))).toEqual(['1970-01-01T00:00:00.000Z', null]);
  });

  it('warns from 80 % and is exhausted from 100 %', () => {
    expect([budgetState(79, 100), budgetState(80, 100), budgetState(99, 100), budgetState(100, 100), budgetState(130, 100)]).toEqual(['ok', 'warned', 'warned', 'exhausted', 'exhausted']);
  });
});
