import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { getAll, type ItemOf, type Problem, problemOf } from '../api.ts';
import { ActorChip, Loading, ProblemNotice } from '../components.tsx';
import { exact } from '../format.ts';
import { Markdown } from '../markdown.tsx';
import { useEvents, useSession } from '../session.ts';
import type { Task } from '../types.ts';
import { assignRequest, commentRequest, requeueRequest, reviewRequest } from './task-actions.ts';
import { PrincipalPicker } from '../principal-picker.tsx';

/** A task in the full view: with its assignee, handoff, attempts and failures (issue 25). */
export type CollabTask = Task;

type Comment = ItemOf<'comments_list'>;


/** The task's thread, live, with a box to post a comment. */
export function Comments({ taskId }: { taskId: string }) {
  const [comments, setComments] = useState<Comment[] | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [draft, setDraft] = useState('');
  const action = useAction();
  const { busy, problem } = action;
  const load = () =>
    getAll('comments_list', { id: taskId }).then(
      (page) => {
        setComments(page.data);
        setLoadProblem(null);
      },
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  useEffect(() => void load(), [taskId]);
  useEvents((event) => {
    if (event.subject === taskId && event.type.startsWith('comment.')) void load();
  });

  const post = async (e: Event) => {
    e.preventDefault();
    await action.send(commentRequest(taskId, draft), async () => {
      setDraft('');
      await load();
    });
  };

  return (
    <section class="card" aria-labelledby="comments-title">
      <h2 id="comments-title">Comments</h2>
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!comments ? (
        !loadProblem && <Loading what="comments" />
      ) : comments.length === 0 ? (
        <p class="muted">No comments yet.</p>
      ) : (
        <ol class="comments">
          {comments.map((c) => (
            <li key={c.id} class="comment" data-comment={c.id}>
              <div class="comment-head">
                <ActorChip actor={c.author} /> <span class="muted small">{exact(c.created_at)}</span>
              </div>
              {c.deleted_at ? <p class="muted comment-body">Comment deleted.</p> : <Markdown class="comment-body" source={c.body ?? ''} />}
            </li>
          ))}
        </ol>
      )}
      <form class="comment-form" onSubmit={(e) => void post(e)}>
        <label for="comment-draft">Add a comment</label>
        <textarea id="comment-draft" rows={3} maxLength={4000} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} placeholder="Markdown; @name mentions someone (a space as _: @Ada_Lovelace)" />
        {problem && <ProblemNotice problem={problem} onDismiss={action.dismiss} />}
        <button type="submit" class="button-primary" disabled={busy || draft.trim() === ''}>
          Post comment
        </button>
      </form>
    </section>
  );
}

/** Who the task is for, with a control to set it (and to take the task back from a lease holder when needed). */
export function AssigneePanel({ task, onChanged }: { task: CollabTask; onChanged: (task: CollabTask) => void }) {
  const [choice, setChoice] = useState(task.assignee?.id ?? '');
  const action = useAction();
  const { busy, problem } = action;
  useEffect(() => setChoice(task.assignee?.id ?? ''), [task.assignee?.id]);

  const assign = async (releaseLease: boolean) => {
    await action.send(assignRequest(task.id, choice === '' ? null : choice, releaseLease), (updated) => onChanged(updated as CollabTask));
  };

  return (
    <section class="card" aria-labelledby="assignee-title">
      <h2 id="assignee-title">Assignee</h2>
      <p class="assignee-now">{task.assignee ? <ActorChip actor={task.assignee} /> : <span class="muted">Anyone may claim it.</span>}</p>
      <label for="assignee-choice">Assign to</label>
      <div class="assignee-row">
        <PrincipalPicker id="assignee-choice" value={choice} onChange={setChoice} fixed={[{ value: '', label: 'Nobody (anyone may claim)' }]} />
        <button type="button" disabled={busy || choice === (task.assignee?.id ?? '')} onClick={() => void assign(false)}>
          Assign
        </button>
      </div>
      {problem && (
        <ProblemNotice problem={problem} onDismiss={action.dismiss}>
          {problem.code === 'assignee_lease_held' && (
            <button type="button" onClick={() => void assign(true)} disabled={busy}>
              End the lease and assign
            </button>
          )}
        </ProblemNotice>
      )}
    </section>
  );
}

/** The hand-in for review and, while in review, approve or request changes (a comment is required for changes). */
export function ReviewPanel({ task, onChanged }: { task: CollabTask; onChanged: (task: CollabTask) => void }) {
  const [feedback, setFeedback] = useState('');
  const action = useAction();
  const { busy, problem } = action;
  if (!task.handoff && task.status !== 'in_review') return null;

  const decide = async (decision: 'approve' | 'request_changes') => {
    await action.send(reviewRequest(task.id, decision, feedback), (updated) => {
      setFeedback('');
      onChanged(updated as CollabTask);
    });
  };

  return (
    <section class="card" aria-labelledby="review-title">
      <h2 id="review-title">Review</h2>
      {task.handoff && (
        <div class="handoff">
          <p class="small muted">
            Handed in by <ActorChip actor={task.handoff.by} /> {exact(task.handoff.at)}
          </p>
          {task.handoff.summary === '' ? <p class="small muted">No summary given.</p> : <Markdown class="handoff-summary" source={task.handoff.summary} />}
          {task.handoff.artifacts.length > 0 && <p class="small">Artifacts: {task.handoff.artifacts.map((a) => <code key={a}>{a} </code>)}</p>}
        </div>
      )}
      {task.status === 'in_review' && (
        <div class="review-form">
          <label for="review-feedback">Feedback (required to request changes)</label>
          <textarea id="review-feedback" rows={3} maxLength={4000} value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
          {problem && <ProblemNotice problem={problem} onDismiss={action.dismiss} />}
          <div class="review-actions">
            <button type="button" class="button-primary" disabled={busy} onClick={() => void decide('approve')}>
              Approve
            </button>
            <button type="button" disabled={busy || feedback.trim() === ''} onClick={() => void decide('request_changes')}>
              Request changes
            </button>
          </div>
        </div>
      )}
    </section>
  );
}

/** Failed attempts, the back-off, and for a dead-lettered task the one action that puts it back in the queue. */
export function AttemptsPanel({ task, onChanged }: { task: CollabTask; onChanged: (task: CollabTask) => void }) {
  const action = useAction();
  const { manifest } = useSession();
  const { busy, problem } = action;
  if (!task.attempts && !task.blocked_reason) return null;

  const requeue = () => action.send(requeueRequest(task.id), (updated) => onChanged(updated as CollabTask));

  return (
    <section class="card" aria-labelledby="attempts-title">
      <h2 id="attempts-title">Attempts</h2>
      {task.blocked_reason === 'attempts_exhausted' && <p class="dead-letter">Dead letter: every attempt failed, so the task left the queue.</p>}
      <p>
        {task.attempts ?? 0} failed attempt{task.attempts === 1 ? '' : 's'}
        {` of ${task.max_attempts ?? manifest.attempts.default_max_attempts}`}
        {task.not_before && Date.parse(task.not_before) > Date.now() ? `; claimable again ${exact(task.not_before)}` : ''}
      </p>
      {task.failures && task.failures.length > 0 && (
        <ol class="failures small">
          {task.failures.map((f) => (
            <li key={f.at}>
              {exact(f.at)}: {f.kind === 'expired' ? 'the lease ran out' : (f.reason ?? 'failed')}
            </li>
          ))}
        </ol>
      )}
      {problem && <ProblemNotice problem={problem} onDismiss={action.dismiss} />}
      {task.blocked_reason === 'attempts_exhausted' && (
        <button type="button" class="button-primary" disabled={busy} onClick={() => void requeue()}>
          Requeue
        </button>
      )}
    </section>
  );
}
