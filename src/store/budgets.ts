import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { BudgetsTable, DB } from './schema.ts';
import type { Tx } from './connection.ts';

export type BudgetRow = Selectable<BudgetsTable>;

export async function insertBudget(tx: Tx, row: Insertable<BudgetsTable>): Promise<BudgetRow> {
  return tx.insertInto('budgets').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A budget that is not deleted. */
export async function findBudget(db: Kysely<DB>, id: string): Promise<BudgetRow | undefined> {
  return db.selectFrom('budgets').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function lockBudget(tx: Tx, id: string): Promise<BudgetRow | undefined> {
  return tx.selectFrom('budgets').selectAll().where('id', '=', id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
}

/** Locks the live budget a task's max_cost made, if it has one. */
export async function lockMaxCostBudget(tx: Tx, taskId: string): Promise<BudgetRow | undefined> {
  return tx.selectFrom('budgets').selectAll().where('target', '=', taskId).where('task_max_cost', '=', true).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
}

/** Applies changes and bumps the version. */
export async function updateBudget(tx: Tx, id: string, changes: Updateable<BudgetsTable>): Promise<BudgetRow> {
  return tx.updateTable('budgets').set({ ...changes, version: sql`version + 1` }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** Locks budgets in id order (every locker takes them in that order, so two never wait on each other). */
export async function lockBudgets(tx: Tx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.selectFrom('budgets').select('id').where('id', 'in', [...ids]).orderBy('id').forUpdate().execute();
}

export interface SpendEntry {
  budget_id: string;
  window_start: Date;
  amount: number;
  at: Date;
}

/** Records what a report, claim or override spent from budgets. */
export async function addSpend(tx: Tx, entries: readonly SpendEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await tx.insertInto('budget_spend').values([...entries]).execute();
}

/** What each budget spent in the window given for it (0 for none). */
export async function windowSpent(db: Kysely<DB>, windows: readonly { id: string; start: Date }[]): Promise<Map<string, number>> {
  const spent = new Map(windows.map((w) => [w.id, 0]));
  if (windows.length === 0) return spent;
  const rows = await db
    .selectFrom('budget_spend')
    .select(['budget_id', sql<string>`sum(amount)`.as('spent')])
    .where((eb) => eb.or(windows.map((w) => eb.and([eb('budget_id', '=', w.id), eb('window_start', '=', w.start)]))))
    .groupBy('budget_id')
    .execute();
  for (const row of rows) spent.set(row.budget_id, Number(row.spent));
  return spent;
}

/**
 * Marks that a window's warning (or exhaustion) event is written, unless it already was: true for
 * the one transaction that marks it, however many cross the line at once.
 */
export async function markCrossed(tx: Tx, id: string, column: 'warned_for' | 'exhausted_for', window: Date): Promise<boolean> {
  const result = await tx
    .updateTable('budgets')
    .set({ [column]: window })
    .where('id', '=', id)
    .where((eb) => eb.or([eb(column, 'is', null), eb(column, '<>', window)]))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export interface BudgetQuery {
  appliesTo: BudgetRow['applies_to'] | undefined;
  target: string | undefined;
  afterId: string | undefined;
  limit: number;
}

/** One page of live budgets by id; fetches `limit + 1` for `has_more`. */
export async function listBudgets(db: Kysely<DB>, q: BudgetQuery): Promise<BudgetRow[]> {
  let query = db.selectFrom('budgets').selectAll().where('deleted_at', 'is', null);
  if (q.appliesTo) query = query.where('applies_to', '=', q.appliesTo);
  if (q.target) query = query.where('target', '=', q.target);
  if (q.afterId) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit + 1).execute();
}

/** What a run spends from: its holder, its task's labels, its task, its workspace. */
export interface SpendTarget {
  agentId: string;
  labels: readonly string[];
  taskId: string;
  workspaceId: string;
}

/** The live budgets a run on `target` spends from, in id order. */
export async function budgetsFor(db: Kysely<DB>, target: SpendTarget): Promise<BudgetRow[]> {
  return db
    .selectFrom('budgets')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('applies_to', '=', 'agent'), eb('target', '=', target.agentId)]),
        eb.and([eb('applies_to', '=', 'task'), eb('target', '=', target.taskId)]),
        eb.and([eb('applies_to', '=', 'workspace'), eb('target', '=', target.workspaceId)]),
        ...(target.labels.length > 0 ? [eb.and([eb('applies_to', '=', 'label'), eb('target', 'in', [...target.labels])])] : []),
      ]),
    )
    .orderBy('id')
    .execute();
}

/**
 * Whether a run on `target` spends from `row`: `budgetsFor`'s test, for a row already read with
 * others (a claimer's, `claimerBudgets`, which holds every budget a run of its pick spends from).
 */
export function spendsFrom(row: BudgetRow, target: SpendTarget): boolean {
  switch (row.applies_to) {
    case 'agent':
      return row.target === target.agentId;
    case 'task':
      return row.target === target.taskId;
    case 'workspace':
      return row.target === target.workspaceId;
    case 'label':
      return target.labels.includes(row.target);
  }
}

/** The budgets that may stop an agent's claim of the next task: its own, its workspace's, every label budget, and those of open tasks. */
export async function claimerBudgets(db: Kysely<DB>, agentId: string, workspaceId: string): Promise<BudgetRow[]> {
  return db
    .selectFrom('budgets')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('applies_to', '=', 'agent'), eb('target', '=', agentId)]),
        eb.and([eb('applies_to', '=', 'workspace'), eb('target', '=', workspaceId)]),
        eb('applies_to', '=', 'label'),
        eb.and([
          eb('applies_to', '=', 'task'),
          eb.exists(eb.selectFrom('tasks').select('tasks.id').whereRef('tasks.id', '=', 'budgets.target').where('tasks.status', 'in', ['todo', 'in_progress'])),
        ]),
      ]),
    )
    .orderBy('id')
    .execute();
}

/** What a task's runs have spent so far, in one currency: micro-units, tokens, runs (for a task budget made after some). */
export async function taskSpend(db: Kysely<DB>, taskId: string, currency: string | null): Promise<{ cost: number; tokens: number; runs: number }> {
  const row = await db
    .selectFrom('leases')
    .leftJoin('runs', 'runs.lease_id', 'leases.id')
    .select([
      sql<string>`coalesce(sum(CASE WHEN runs.currency = ${currency} THEN runs.cost_micros ELSE 0 END), 0)`.as('cost'),
      sql<string>`coalesce(sum(runs.input_tokens + runs.output_tokens), 0)`.as('tokens'),
      sql<string>`count(*)`.as('runs'),
    ])
    .where('leases.task_id', '=', taskId)
    .executeTakeFirstOrThrow();
  return { cost: Number(row.cost), tokens: Number(row.tokens), runs: Number(row.runs) };
}
