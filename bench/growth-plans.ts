/**
 * The plan check of bench/growth.ts: which plans Baton's statements get at each size, and how many
 * shared buffers they touch. It records the SQL (text and parameters) every pg client sends during
 * one request, by wrapping pg's `Client#query` as bench/sql-check.ts does, then runs each recorded
 * statement again under `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` in a transaction that is rolled
 * back, so a claim's writes leave nothing behind.
 */
import pg from 'pg';

/** What one request's statements cost in the database. */
export interface PlanReading {
  /** Shared buffers the statements' execution touched (hit + read), summed over the request. */
  buffers: number;
  /** Every plan node as `Node Type` (with its index or relation), statement by statement: equal strings, equal plans. */
  shape: string;
}

interface Recorded {
  text: string;
  values: unknown[];
}

/** The statements `request` sends, recorded from every pg client of this process while it runs. */
export async function recordStatements(request: () => Promise<void>): Promise<Recorded[]> {
  const client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = client.query;
  const sent: Recorded[] = [];
  client.query = function (this: unknown, ...args: unknown[]) {
    const [first, second] = args;
    const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    const values = Array.isArray(second) ? second : ((first as { values?: unknown[] } | undefined)?.values ?? []);
    if (text !== undefined) sent.push({ text, values });
    return query.apply(this, args);
  };
  try {
    await request();
  } finally {
    client.query = query;
  }
  return sent;
}

/** Transaction control and settings carry no plan. */
const PLANNABLE = /^\s*(select|with|insert|update|delete)\b/i;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** Runs `statements` again under EXPLAIN ANALYZE on the database at `url`, rolled back. */
export async function explainStatements(url: string, statements: readonly Recorded[]): Promise<PlanReading> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const reading: PlanReading = { buffers: 0, shape: '' };
  const shapes: string[] = [];
  try {
    await client.query('BEGIN');
    for (const { text, values } of statements.filter((s) => PLANNABLE.test(s.text))) {
      // A replayed write can collide with the request's own (an idempotency key, an event id):
      // that statement is named as not replayed and the rest go on.
      await client.query('SAVEPOINT replay');
      const answer = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values).catch(() => undefined);
      await client.query(answer ? 'RELEASE SAVEPOINT replay' : 'ROLLBACK TO SAVEPOINT replay');
      const plan = answer?.rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (!plan) {
        shapes.push(`not replayed: ${text.replace(/\s+/g, ' ').trim().slice(0, 40)}…`);
        continue;
      }
      // A node's counts include its children's, so the top node holds the statement's total.
      reading.buffers += (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
      shapes.push(nodes(plan).join(' > '));
    }
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    await client.end();
  }
  reading.shape = shapes.join(' | ');
  return reading;
}

function nodes(plan: PlanNode): string[] {
  const target = plan['Index Name'] ?? plan['Relation Name'];
  return [`${plan['Node Type']}${target ? ` (${target})` : ''}`, ...(plan.Plans ?? []).flatMap(nodes)];
}
