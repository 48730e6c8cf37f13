import { describe, expect, it } from 'vitest';
import { MISSED_AFTER_MS, nextRuns, plan } from './schedule-plan.ts';

const at = (iso: string) => new Date(iso);
const daily = { cron: '0 9 * * *', time_zone: 'Europe/Berlin', catch_up: 0 };

describe('schedule plans', () => {
  it('a daily 09:00 in Berlin keeps its wall-clock time through both daylight-saving changes', () => {
    expect(nextRuns('0 9 * * *', 'Europe/Berlin', at('2026-03-27T12:00:00Z'), 3).map((d) => d.toISOString())).toEqual([
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    expect(nextRuns('0 9 * * *', 'Europe/Berlin', at('2026-10-24T12:00:00Z'), 2).map((d) => d.toISOString())).toEqual(['2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('an hour that happens twice (02:30 on the autumn change) runs once; one that never happens runs at the next valid time', () => {
    expect(nextRuns('30 2 * * *', 'Europe/Berlin', at('2026-10-24T12:00:00Z'), 2).map((d) => d.toISOString())).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    expect(nextRuns('30 2 * * *', 'Europe/Berlin', at('2026-03-28T12:00:00Z'), 1).map((d) => d.toISOString())).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('an occurrence on time is created; the next one is after now', () => {
    const p = plan(daily, at('2026-06-01T07:00:00Z'), at('2026-06-01T07:00:05Z'));
    expect(p.create.map((d) => d.toISOString())).toEqual(['2026-06-01T07:00:00.000Z']);
    expect(p).toMatchObject({ missed: 0, next: at('2026-06-02T07:00:00Z') });
  });

  it('after downtime, missed occurrences are skipped, or the most recent catch_up of them created', () => {
    const first = at('2026-06-01T07:00:00Z');
    const now = at('2026-06-04T12:00:00Z');
    expect(plan(daily, first, now)).toMatchObject({ create: [], missed: 4, next: at('2026-06-05T07:00:00Z') });
    const caught = plan({ ...daily, catch_up: 2 }, first, now);
    expect(caught.create.map((d) => d.toISOString())).toEqual(['2026-06-03T07:00:00.000Z', '2026-06-04T07:00:00.000Z']);
    expect(caught.missed).toBe(2);
  });

  it('an occurrence up to ten minutes late is on time', () => {
    const first = at('2026-06-01T07:00:00Z');
    expect(plan(daily, first, new Date(first.getTime() + MISSED_AFTER_MS)).create).toEqual([first]);
    expect(plan(daily, first, new Date(first.getTime() + MISSED_AFTER_MS + 1)).create).toEqual([]);
  });
});
