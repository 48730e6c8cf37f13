/**
 * The shortest path of `blocked_by` edges from `blockers` back to `task`, as the cycle that adding
 * "task blocked by each of `blockers`" would close: `[task, blocker, …, task]`, each entry blocked
 * by the next. Undefined when `task` is not reachable, i.e. the edges close no cycle. `edges` maps
 * a task to its own blockers; a task missing from it has none (or was not walked).
 */
export function findCycle(task: string, blockers: readonly string[], edges: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  // Breadth first, so the cycle named is a shortest one; `via` remembers how each task was reached.
  const via = new Map<string, string>(blockers.map((b) => [b, task]));
  let level = [...blockers];
  while (level.length > 0) {
    const next: string[] = [];
    for (const id of level) {
      if (id === task) return pathBack(task, via);
      for (const blocker of edges.get(id) ?? []) {
        if (via.has(blocker)) continue;
        via.set(blocker, id);
        next.push(blocker);
      }
    }
    level = next;
  }
  return undefined;
}

/** Follows `via` from `task` (reached as the last step) back to the start, then reads it forwards. */
function pathBack(task: string, via: ReadonlyMap<string, string>): string[] {
  const path = [task];
  let at = via.get(task);
  while (at !== undefined && at !== task) {
    path.push(at);
    at = via.get(at);
  }
  path.push(task);
  return path.reverse();
}
