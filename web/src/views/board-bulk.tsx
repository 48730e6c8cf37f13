import { useState } from 'preact/hooks';
import type { BulkItem, BulkOutcome, BulkRequest, Selection } from '../bulk.ts';
import { useConfirm } from '../confirm.tsx';
import { useUndo } from '../undo.tsx';
import { STATUS_LABEL } from '../format.ts';
import { can, useSession } from '../session.ts';
import { STATUSES, type Status, type Task } from '../types.ts';
import { BulkBar, BulkResults, useBulk } from './bulk-bar.tsx';
import { archivedBack, assignBack, labelsBack, moveBack, type TaskInverse, undoBulk } from './bulk-undo.ts';
import { archiveRequest } from './task-actions.ts';
import { PrincipalPicker } from '../principal-picker.tsx';

/**
 * The board's bulk actions over the selected cards, each the operation an agent would call for one
 * task, with If-Match at the version the board shows: move, assign, add a label, approve reviews,
 * request changes with one comment, archive (finished ones; the server refuses the others, each
 * shown) or unarchive. `matching` is every task that passes the filters, in board order. A move to
 * Cancelled is asked first; a move, an assignment, a label or an archive is offered for undo in the toast.
 */
export function BoardBulk({ selection, tasks, matching, onTasks }: { selection: Selection; tasks: ReadonlyMap<string, Task>; matching: readonly Task[]; onTasks: (tasks: Task[]) => void }) {
  const session = useSession();
  const tasksOf = (outcomes: BulkOutcome[]) => outcomes.flatMap((o) => (o.result && typeof o.result === 'object' ? [o.result as Task] : []));
  const bulk = useBulk(selection, (outcomes) => onTasks(tasksOf(outcomes)));
  const confirm = useConfirm();
  const showUndo = useUndo();
  const [to, setTo] = useState<Status | ''>('');
  const [assignee, setAssignee] = useState('');
  const [label, setLabel] = useState('');
  const [comment, setComment] = useState('');
  const chosen = [...selection.selected].flatMap((id) => {
    const task = tasks.get(id);
    return task ? [task] : [];
  });
  const inReview = matching.filter((t) => t.status === 'in_review');
  /** Sends `request` for each of `among` (by default every chosen task). */
  const run = async (action: string, request: (task: Task) => BulkRequest, inverse?: TaskInverse, among: readonly Task[] = chosen) => {
    const byId = new Map(among.map((t) => [t.id, t]));
    const items: BulkItem[] = among.map((t) => ({ id: t.id, label: t.title }));
    const outcomes = await bulk.run(action, items, (item) => request(byId.get(item.id) as Task));
    const done = outcomes.filter((o) => o.problem === null).length;
    if (!inverse || done === 0) return;
    const undone = (back: BulkOutcome[]) => {
      onTasks(tasksOf(back));
      bulk.show({ action: `Undo ${action}`, outcomes: back });
    };
    showUndo(`${action}: ${done} task${done === 1 ? '' : 's'}.`, undoBulk(action, byId, outcomes, inverse, undone));
  };
  const moveSelected = async (to: Status) => {
    if (to === 'cancelled' && !(await confirm.ask(cancelAll(chosen)))) return;
    await run(`Move to ${STATUS_LABEL[to]}`, (t) => ({ operation: 'tasks_update', input: { id: t.id, status: to }, ifMatch: t.version }), moveBack);
  };
  const review = (decision: 'approve' | 'request_changes') =>
    run(decision === 'approve' ? 'Approve reviews' : 'Request changes', (t) => ({
      operation: 'tasks_review',
      input: { id: t.id, decision, ...(decision === 'request_changes' ? { comment: comment.trim() } : {}) },
      ifMatch: t.version,
    }));
  const n = chosen.length;
  const archived = chosen.filter((t) => t.archived_at).length;
  /** Archives the chosen tasks not archived yet, or unarchives the archived ones. */
  const archiveSelected = (to: boolean) =>
    run(to ? 'Archive' : 'Unarchive', (t) => ({ ...archiveRequest(t.id, to), ifMatch: t.version }), archivedBack, chosen.filter((t) => Boolean(t.archived_at) !== to));
  return (
    <>
      {bulk.report && <BulkResults report={bulk.report} onDismiss={bulk.dismiss} />}
      {confirm.dialog}
      <BulkBar selection={selection} matching={matching.map((t) => t.id)} noun="task" busy={bulk.busy}>
        {inReview.length > 0 && inReview.some((t) => !selection.selected.has(t.id)) && (
          <button type="button" class="button-quiet" onClick={() => selection.set(inReview.map((t) => t.id))}>
            Select the {inReview.length} in review
          </button>
        )}
        {can(session, 'tasks_update') && (
          <form
            class="bulk-actions"
            onSubmit={(e) => {
              e.preventDefault();
              if (to) void moveSelected(to);
            }}
          >
            <select aria-label="Move the selected tasks to" value={to} onChange={(e) => setTo(e.currentTarget.value as Status | '')}>
              <option value="">Move to…</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {STATUS_LABEL[s]}
                </option>
              ))}
            </select>
            <button type="submit" class="button" disabled={bulk.busy || !to}>
              Move {n}
            </button>
          </form>
        )}
        {can(session, 'tasks_update') && (
          <div class="bulk-actions">
            {archived < n && (
              <button type="button" class="button" disabled={bulk.busy} onClick={() => void archiveSelected(true)}>
                Archive {n - archived}
              </button>
            )}
            {archived > 0 && (
              <button type="button" class="button" disabled={bulk.busy} onClick={() => void archiveSelected(false)}>
                Unarchive {archived}
              </button>
            )}
          </div>
        )}
        {can(session, 'tasks_assign') && (
          <form
            class="bulk-actions"
            onSubmit={(e) => {
              e.preventDefault();
              void run(assignee ? `Assign to ${session.names.get(assignee) ?? assignee}` : 'Unassign', (t) => ({ operation: 'tasks_assign', input: { id: t.id, assignee: assignee || null }, ifMatch: t.version }), assignBack);
            }}
          >
            <PrincipalPicker label="Assign the selected tasks to" value={assignee} onChange={setAssignee} fixed={[{ value: '', label: 'Nobody' }]} />
            <button type="submit" class="button" disabled={bulk.busy}>
              Assign {n}
            </button>
          </form>
        )}
        {can(session, 'tasks_update') && (
          <form
            class="bulk-actions"
            onSubmit={(e) => {
              e.preventDefault();
              const add = label.trim();
              if (add) void run(`Label ${add}`, (t) => ({ operation: 'tasks_update', input: { id: t.id, labels: t.labels.includes(add) ? t.labels : [...t.labels, add] }, ifMatch: t.version }), labelsBack);
            }}
          >
            <input type="text" aria-label="Label to add to the selected tasks" maxLength={50} placeholder="Label" value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
            <button type="submit" class="button" disabled={bulk.busy || !label.trim()}>
              Add label
            </button>
          </form>
        )}
        {can(session, 'tasks_review') && (
          <form
            class="bulk-actions"
            onSubmit={(e) => {
              e.preventDefault();
              if (comment.trim()) void review('request_changes');
            }}
          >
            <button type="button" class="button-primary" disabled={bulk.busy} onClick={() => void review('approve')}>
              Approve {n} review{n === 1 ? '' : 's'}
            </button>
            <input type="text" aria-label="Comment for the changes requested" maxLength={4000} placeholder="What to change" value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
            <button type="submit" class="button" disabled={bulk.busy || !comment.trim()}>
              Request changes
            </button>
          </form>
        )}
      </BulkBar>
    </>
  );
}

/** A bulk move to Cancelled drops the work (agents stop on it): asked first, as for one task. */
function cancelAll(tasks: readonly Task[]) {
  const held = tasks.filter((t) => t.lease).length;
  return {
    title: `Cancel ${tasks.length} task${tasks.length === 1 ? '' : 's'}?`,
    body: `They leave their columns for Cancelled${held > 0 ? `, and the leases on ${held} of them end` : ''}. Each can be reopened as To do later.`,
    confirm: `Cancel ${tasks.length} task${tasks.length === 1 ? '' : 's'}`,
  };
}
