import { ApiProblem, newKey, type Problem } from '../api.ts';
import { type BulkItem, type BulkOutcome, type BulkRequest, runBulk } from '../bulk.ts';
import type { Task } from '../types.ts';
import type { Inverse } from '../undo.tsx';
import { noWayBack } from './undo-move.ts';

/** The request that takes one task back from `after` to `before`, or the sentence saying why it cannot go back. */
export type TaskInverse = (before: Task, after: Task) => BulkRequest | string;

/** At the version the action produced, with the undo's own Idempotency-Key, chosen now. */
const at = (after: Task) => ({ ifMatch: after.version, key: newKey() });

/** A move back to the status it left, when the state machine allows it. */
export const moveBack: TaskInverse = (before, after) => noWayBack(before, after) ?? { operation: 'tasks_update', input: { id: after.id, status: before.status }, ...at(after) };

/** The assignee it had (or nobody). */
export const assignBack: TaskInverse = (before, after) => ({ operation: 'tasks_assign', input: { id: after.id, assignee: before.assignee?.id ?? null }, ...at(after) });

/** The labels it had. */
export const labelsBack: TaskInverse = (before, after) => ({ operation: 'tasks_update', input: { id: after.id, labels: before.labels }, ...at(after) });

/** Archived again or not, as it was (an archive of a task archived already changed nothing). */
export const archivedBack: TaskInverse = (before, after) =>
  Boolean(before.archived_at) === Boolean(after.archived_at) ? 'Nothing changed.' : { operation: 'tasks_update', input: { id: after.id, archived: Boolean(before.archived_at) }, ...at(after) };

const cannot = (why: string): Problem => ({ code: 'cannot_undo', title: 'It cannot be undone', status: 0, detail: why });

/**
 * The undo of a bulk action over tasks: for each task it did (`outcomes` with the server's answer),
 * the inverse request with its own Idempotency-Key, chosen now so a repeated Undo cannot apply
 * twice, and If-Match at the version the action produced, so a task changed since is refused,
 * never overwritten. `report` receives every item's outcome (the server's refusals and the tasks
 * with no way back); the toast's undo fails, naming the refused tasks, when any was refused. When
 * no task has an inverse, the sentence that says why.
 */
export function undoBulk(action: string, before: ReadonlyMap<string, Task>, outcomes: readonly BulkOutcome[], inverse: TaskInverse, report: (outcomes: BulkOutcome[]) => void): Inverse {
  const done = outcomes.flatMap((o) => {
    const was = before.get(o.id);
    return o.problem === null && was && o.result && typeof o.result === 'object' ? [{ item: { id: o.id, label: o.label }, back: inverse(was, o.result as Task) }] : [];
  });
  const first = done.find((d) => typeof d.back === 'string')?.back;
  if (done.every((d) => typeof d.back === 'string')) return typeof first === 'string' ? first : `${action} cannot be undone.`;
  const requests = new Map(done.map((d) => [d.item.id, d.back]));
  const items: BulkItem[] = done.map((d) => d.item);
  return async () => {
    const back = await runBulk(items, (item) => {
      const request = requests.get(item.id) ?? 'Nothing to undo.';
      return typeof request === 'string' ? cannot(request) : request;
    });
    report(back);
    const refused = back.filter((o) => o.problem !== null);
    if (refused.length > 0) {
      throw new ApiProblem({
        code: 'undo_refused',
        title: 'Some could not be undone',
        status: 0,
        detail: `${back.length - refused.length} of ${back.length} undone; not ${refused.map((o) => `“${o.label}”`).join(', ')}.`,
        hint: 'The results say why for each.',
      });
    }
  };
}
