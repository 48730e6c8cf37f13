import { sql, type Kysely } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB } from './schema.ts';

/**
 * Serializes writes that add `blocked_by` edges for the rest of the transaction: two concurrent
 * writes (A blocked by B, B blocked by A) each walk the graph before the other commits, so they
 * take turns. Its own key, not the tree lock's: moves in the tree and new blockers never wait on
 * each other, and claims take neither.
 */
export async function lockBlockerGraph(tx: Tx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(25, 6)`.execute(tx);
}

/** A live task reached by a walk of `blocked_by`, with its own blockers. */
export interface Upstream {
  id: string;
  blocked_by: string[];
  /** The longest chain of blockers found from the walk's start to this task, the start being 1. */
  depth: number;
}

/**
 * The live tasks `ids` wait on, transitively, themselves included, at most `levels` deep. The walk
 * does not go on through `stop` (the task gaining the edges): reaching it is all a cycle check
 * needs. UNION keeps one row per task and depth, so a diamond-shaped graph costs tasks × levels.
 */
export async function upstreamBlockers(db: Kysely<DB>, ids: readonly string[], stop: string | null, levels: number): Promise<Upstream[]> {
  const { rows } = await sql<Upstream>`
    WITH RECURSIVE up (id, depth) AS (
      SELECT id, 1 FROM tasks WHERE id = ANY (${ids}::text[]) AND deleted_at IS NULL
      UNION
      SELECT b.id, up.depth + 1
      FROM up JOIN tasks t ON t.id = up.id CROSS JOIN LATERAL unnest(t.blocked_by) AS u(id) JOIN tasks b ON b.id = u.id AND b.deleted_at IS NULL
      WHERE up.depth < ${levels} AND up.id IS DISTINCT FROM ${stop}::text
    )
    SELECT up.id, t.blocked_by, max(up.depth)::int AS depth FROM up JOIN tasks t ON t.id = up.id GROUP BY up.id, t.blocked_by`.execute(db);
  return rows.map((r) => ({ ...r, depth: Number(r.depth) }));
}

/**
 * How many levels of live tasks wait on this one, transitively: 0 when none names it in
 * `blocked_by`, at most `levels`. Each level is a lookup in the `tasks_blocked_by` index.
 */
export async function dependentsHeight(db: Kysely<DB>, id: string, levels: number): Promise<number> {
  const { rows } = await sql<{ height: number }>`
    WITH RECURSIVE down (id, depth) AS (
      SELECT id, 1 FROM tasks WHERE blocked_by @> ARRAY[${id}::text] AND blocked_by <> '{}' AND deleted_at IS NULL
      UNION
      SELECT t.id, down.depth + 1 FROM down JOIN tasks t ON t.blocked_by @> ARRAY[down.id] AND t.blocked_by <> '{}' AND t.deleted_at IS NULL
      WHERE down.depth < ${levels}
    )
    SELECT COALESCE(max(depth), 0)::int AS height FROM down`.execute(db);
  return Number(rows[0]?.height ?? 0);
}
