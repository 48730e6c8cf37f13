import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, createTask, INSTANCES, startInstances } from '../leases/instances.ts';
import type { Response } from '../harness.ts';

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { sweepIntervalMs: 0 });
});
afterAll(() => cluster.close());

const make = async (body: Record<string, unknown> = {}) => (await createTask(cluster, body)).id;
const patch = (id: string, body: Record<string, unknown>, via: number) => cluster.request('PATCH', `/api/v1/tasks/${id}`, { body, via: via % INSTANCES });

/**
 * Test setup, not behaviour under test: `count` copies of a new task, by SQL, each blocked by the
 * one before; the last ends the chain.
 */
async function chain(count: number): Promise<string[]> {
  const template = await make({ title: 'link' });
  const ids = Array.from({ length: count }, () => `tsk_${String(++copies).padStart(26, '0')}`);
  await sql`
    INSERT INTO tasks SELECT (jsonb_populate_record(t, jsonb_build_object('id', c.id, 'blocked_by', c.blocked_by))).*
    FROM tasks t, jsonb_to_recordset(${JSON.stringify(ids.map((x, i) => ({ id: x, blocked_by: i === 0 ? [] : [ids[i - 1]] })))}::jsonb) AS c(id text, blocked_by jsonb)
    WHERE t.id = ${template}`.execute(cluster.database.db);
  return ids;
}
let copies = 0;

/** The codes of the refused writes; every answer is a 200 or a 422 (never a 5xx). */
function refusals(answers: readonly Response[]): string[] {
  for (const answer of answers) expect([200, 422], answer.body).toContain(answer.status);
  return answers.filter((a) => a.status === 422).map((a) => a.json<{ code: string }>().code);
}

/** A cycle among the live tasks, following `edge` (a task's blockers, or its parent); undefined if none. */
async function anyCycle(edge: (row: { blocked_by: string[]; parent_id: string | null }) => string[]): Promise<string[] | undefined> {
  const rows = await cluster.database.db.selectFrom('tasks').select(['id', 'blocked_by', 'parent_id']).where('deleted_at', 'is', null).execute();
  const next = new Map(rows.map((r) => [r.id, edge(r)]));
  const state = new Map<string, 'open' | 'closed'>();
  const visit = (id: string, path: string[]): string[] | undefined => {
    if (state.get(id) === 'open') return [...path, id];
    if (state.get(id) === 'closed') return undefined;
    state.set(id, 'open');
    for (const to of next.get(id) ?? []) {
      const found = visit(to, [...path, id]);
      if (found) return found;
    }
    state.set(id, 'closed');
    return undefined;
  };
  for (const id of next.keys()) {
    const found = visit(id, []);
    if (found) return found;
  }
  return undefined;
}
const blockerCycle = () => anyCycle((r) => r.blocked_by);
const parentCycle = () => anyCycle((r) => (r.parent_id ? [r.parent_id] : []));

describe('concurrent edge writes across instances', () => {
  it('A waits on B and B waits on A at once, round after round: exactly one wins, the other is told the cycle', async () => {
    for (let round = 0; round < 12; round++) {
      const a = await make({ title: `a ${round}` });
      const b = await make({ title: `b ${round}` });
      const answers = await Promise.all([patch(a, { blocked_by: [b] }, round), patch(b, { blocked_by: [a] }, round + 1)]);
      expect(refusals(answers)).toEqual(['blocked_by_cycle']);
      const loser = answers.find((r) => r.status === 422)!.json<{ cycle: string[] }>();
      expect([[a, b, a], [b, a, b]]).toContainEqual(loser.cycle);
    }
    expect(await blockerCycle()).toBeUndefined();
  });

  it('a ring of 8 tasks, each adding the edge that would close it, all at once: exactly one is refused', async () => {
    for (let round = 0; round < 3; round++) {
      const ring = await Promise.all(Array.from({ length: 8 }, (_, i) => make({ title: `ring ${round}.${i}` })));
      const answers = await Promise.all(ring.map((id, i) => patch(id, { blocked_by: [ring[(i + 1) % ring.length]] }, i)));
      expect(refusals(answers)).toEqual(['blocked_by_cycle']);
      const refused = answers.find((r) => r.status === 422)!.json<{ cycle: string[] }>();
      expect(refused.cycle).toHaveLength(9);
      expect(new Set(refused.cycle)).toEqual(new Set(ring));
    }
    expect(await blockerCycle()).toBeUndefined();
  });

  it('a ring of 6 parent moves at once: exactly one is refused as a parent_cycle', async () => {
    for (let round = 0; round < 3; round++) {
      const ring = await Promise.all(Array.from({ length: 6 }, (_, i) => make({ title: `tree ${round}.${i}` })));
      const answers = await Promise.all(ring.map((id, i) => patch(id, { parent_id: ring[(i + 1) % ring.length] }, i)));
      expect(refusals(answers)).toEqual(['parent_cycle']);
    }
    expect(await parentCycle()).toBeUndefined();
  });

  it('two joins that each keep a chain within 32 tasks, but not both, round after round: exactly one is refused', async () => {
    for (let round = 0; round < 8; round++) {
      const [lower, middle, upper] = [await chain(11), await chain(11), await chain(11)];
      const answers = await Promise.all([patch(middle[0]!, { blocked_by: [lower.at(-1)] }, round), patch(upper[0]!, { blocked_by: [middle.at(-1)] }, round + 1)]);
      expect(refusals(answers)).toEqual(['blocked_by_too_deep']);
    }
  });
});
