import { ProblemNotice } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import type { Status, Task } from '../types.ts';
import type { FailedMove } from './move.ts';

/**
 * Why a move was refused, in plain words, with what can be done instead: the legal targets for
 * `invalid_transition`, a retry at the current version for `conflict_version`. The server's own
 * hint is kept word for word; its detail (ids, raw status names) gives way to a sentence.
 */
export function MoveNotice({ failed, onMove, onDismiss }: { failed: FailedMove; onMove: (task: Task, to: Status, key?: string) => void; onDismiss: () => void }) {
  const { task, to, problem } = failed;
  const from = (problem.current_status as Status | undefined) ?? task.status;
  const legal = (problem.legal_transitions ?? []) as Status[];
  const plain = { ...problem, title: `Could not move “${task.title}” from ${STATUS_LABEL[from]} to ${STATUS_LABEL[to]}`, detail: `${problem.title}.` };
  return (
    <ProblemNotice problem={problem.code === 'invalid_transition' || problem.code === 'conflict_version' ? plain : { ...problem, title: plain.title }} onDismiss={onDismiss}>
      {problem.code === 'invalid_transition' && legal.length > 0 && (
        <p class="notice-actions">
          <span>From {STATUS_LABEL[from]} it can go to:</span>
          {legal.map((target) => (
            <button key={target} type="button" class="button" onClick={() => onMove(task, target)}>
              {STATUS_LABEL[target]}
            </button>
          ))}
        </p>
      )}
      {problem.code === 'conflict_version' && (
        <p class="notice-actions">
          <span>Someone else changed this task meanwhile (it is now version {task.version}); you are seeing the latest.</span>
          <button type="button" class="button" onClick={() => onMove(task, to, failed.key)}>
            Move it to {STATUS_LABEL[to]} anyway
          </button>
        </p>
      )}
    </ProblemNotice>
  );
}
