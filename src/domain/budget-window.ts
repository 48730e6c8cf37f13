/** What a budget counts (spec/runs.md, "Budgets"). */
export const BUDGET_UNITS = ['cost', 'tokens', 'runs'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** A budget's window: a calendar day, ISO week (from Monday) or month in UTC, or a task's lifetime. */
export const BUDGET_PERIODS = ['day', 'week', 'month', 'lifetime'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** The start of time for a lifetime budget's one window. */
const EPOCH = new Date(0);

/** The window `at` falls in: [start, resets_at); a lifetime window never resets (null). */
export function budgetWindow(period: BudgetPeriod, at: Date): { start: Date; resetsAt: Date | null } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (period) {
    case 'day':
      return { start: new Date(Date.UTC(y, m, d)), resetsAt: new Date(Date.UTC(y, m, d + 1)) };
    case 'week': {
      // getUTCDay: 0 is Sunday; ISO weeks start on Monday.
      const back = (at.getUTCDay() + 6) % 7;
      return { start: new Date(Date.UTC(y, m, d - back)), resetsAt: new Date(Date.UTC(y, m, d - back + 7)) };
    }
    case 'month':
      return { start: new Date(Date.UTC(y, m, 1)), resetsAt: new Date(Date.UTC(y, m + 1, 1)) };
    case 'lifetime':
      return { start: EPOCH, resetsAt: null };
  }
}

/** The share of its limit a budget may spend before it warns, once per window. */
export const WARN_AT = 0.8;

/** Where spending `spent` of `limit` stands: warned from 80 %, exhausted from 100 %. */
export function budgetState(spent: number, limit: number): 'ok' | 'warned' | 'exhausted' {
  if (spent >= limit) return 'exhausted';
  return spent >= limit * WARN_AT ? 'warned' : 'ok';
}
