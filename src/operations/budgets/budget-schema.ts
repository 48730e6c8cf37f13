import { z } from 'zod';
import { BUDGET_PERIODS, BUDGET_UNITS, budgetState, budgetWindow } from '../../domain/budget-window.ts';
import type { ActorKind } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import type { Kysely } from 'kysely';
import { type BudgetRow, windowSpent } from '../../store/budgets.ts';
import type { DB } from '../../store/schema.ts';
import { actorRef } from '../tasks/task-schema.ts';

export const budgetId = z.string().regex(new RegExp(idPattern('bdg')), 'must be a budget id: bdg_ followed by a 26-character ULID');

export const BUDGET_SCOPES = ['agent', 'label', 'task', 'workspace'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
export const BUDGET_STATES = ['ok', 'warned', 'exhausted'] as const;

export const appliesToParam = z.enum(BUDGET_SCOPES).describe('What spends from it: an agent\'s runs, runs on a label\'s tasks, one task\'s, or all.');
export const unitParam = z.enum(BUDGET_UNITS).describe('`cost` (money, in `currency`), `tokens` (input + output) or `runs` (claims).');
export const periodParam = z.enum(BUDGET_PERIODS).describe('The window: a UTC calendar day, ISO week or month, or `lifetime` (never resets).');
export const limitParam = z.number().positive().max(1e12).describe('The most the window may spend: money in `currency`, or a count of tokens or runs.');

export const budgetOutput = z.object({
  id: z.string(),
  name: z.string(),
  applies_to: z.enum(BUDGET_SCOPES),
  target: z.string().describe('The agent id, label, task id or workspace id.'),
  unit: z.enum(BUDGET_UNITS),
  currency: z.string().nullable(),
  period: z.enum(BUDGET_PERIODS),
  limit: z.number(),
  spent: z.number().describe('What the current window spent.'),
  state: z.enum(BUDGET_STATES).describe('`warned` from 80 % of the limit, `exhausted` from 100 %: claims that would spend from it are refused.'),
  window_start: z.iso.datetime(),
  resets_at: z.iso.datetime().nullable().describe('When the window ends and spending starts over; null for `lifetime`.'),
  version: z.int(),
  created_at: z.iso.datetime(),
  created_by: actorRef,
  updated_at: z.iso.datetime(),
  updated_by: actorRef,
});
export type Budget = z.infer<typeof budgetOutput>;

/** Stored amounts are integers: micro-units of the currency for money. */
export function toStored(unit: BudgetRow['unit'], amount: number): number {
  return unit === 'cost' ? Math.round(amount * 1e6) : Math.round(amount);
}
function fromStored(unit: BudgetRow['unit'], stored: number | string): number {
  return unit === 'cost' ? Number(stored) / 1e6 : Number(stored);
}

/** A budget and what its window at the time of reading spent (stored units). */
export interface Spending {
  row: BudgetRow;
  spent: number;
}

/** Reads what each budget's current window spent. */
export async function spendingOf(db: Kysely<DB>, rows: readonly BudgetRow[], now: Date): Promise<Spending[]> {
  const spent = await windowSpent(db, rows.map((row) => ({ id: row.id, start: budgetWindow(row.period, now).start })));
  return rows.map((row) => ({ row, spent: spent.get(row.id) ?? 0 }));
}

export function toBudget({ row, spent }: Spending, now: Date): Budget {
  const w = { ...budgetWindow(row.period, now), spent };
  const limit = Number(row.limit_amount);
  return {
    id: row.id,
    name: row.name,
    applies_to: row.applies_to,
    target: row.target,
    unit: row.unit,
    currency: row.currency,
    period: row.period,
    limit: fromStored(row.unit, limit),
    spent: fromStored(row.unit, w.spent),
    state: budgetState(w.spent, limit),
    window_start: w.start.toISOString(),
    resets_at: w.resetsAt?.toISOString() ?? null,
    version: row.version,
    created_at: row.created_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
    updated_at: row.updated_at.toISOString(),
    updated_by: { id: row.updated_by_id, kind: row.updated_by_kind as ActorKind },
  };
}

/** What a refusal, an event and a heartbeat say of a budget. */
export function budgetSummary(spending: Spending, now: Date) {
  const b = toBudget(spending, now);
  return { id: b.id, name: b.name, applies_to: b.applies_to, target: b.target, unit: b.unit, currency: b.currency, spent: b.spent, limit: b.limit, resets_at: b.resets_at };
}

/** The heartbeat's word on an exhausted budget of its run. */
export const heartbeatBudget = z.object({
  exhausted: z.literal(true),
  ...budgetOutput.pick({ id: true, name: true, applies_to: true, target: true, unit: true, currency: true, spent: true, limit: true, resets_at: true }).shape,
});

/** An amount of a budget's unit as a person reads it: `1.05 USD`, `900 tokens`, `3 runs`. */
export function budgetAmount(b: { unit: BudgetRow['unit']; currency: string | null }, n: number): string {
  return b.unit === 'cost' ? `${n} ${b.currency}` : `${n} ${b.unit}`;
}

/** A claim refused because it would spend from an exhausted budget. */
export function budgetExhausted(spending: Spending, now: Date, taskId: string | undefined): BatonError {
  const b = budgetSummary(spending, now);
  const amount = (n: number) => budgetAmount(b, n);
  const resets = b.resets_at ? `it resets at ${b.resets_at}` : 'it never resets';
  return new BatonError('budget_exhausted', `Budget ${b.id} (${b.name}, ${b.applies_to} ${b.target}) has spent ${amount(b.spent)} of ${amount(b.limit)}: ${taskId ? `task ${taskId} is not claimed` : 'nothing is claimed'}; ${resets}.`, {
    hint: `${b.resets_at ? `Claim again after ${b.resets_at}, or ask` : 'Ask'} a human admin or owner to raise the limit: [[budgets_update id=${b.id}]].`,
    extra: { budget: b, raised_by: 'a human with the admin or owner role' },
  });
}

export function budgetNotFound(id: string): BatonError {
  return new BatonError('not_found', `No budget ${id}.`, { hint: '[[budgets_list]] lists the budgets that exist.' });
}
