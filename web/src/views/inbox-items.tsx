import { useEffect, useRef, useState } from 'preact/hooks';
import { useNames } from '../directory.ts';
import type { OutputOf } from '../../../src/client/index.ts';
import { useAction } from '../action.ts';
import { call, problemOf, type Problem } from '../api.ts';
import { ActorChip, ProblemNotice } from '../components.tsx';
import { ago, dueIn, exact } from '../format.ts';
import type { InboxItem } from '../inbox-count.ts';
import { Markdown } from '../markdown.tsx';
import { TargetContext, useContextOf } from './approvals.tsx';
import { useSession } from '../session.ts';
import { useNow } from '../hooks.ts';
import type { Approval, Task } from '../types.ts';

/** An ask as GET /asks/{id} answers it (spec/asks.md). */
type Ask = OutputOf<'asks_get'>;

/** One row of the inbox page: an inbox item, a pending approval or a task waiting for review. */
export type Entry = { kind: 'item'; id: string; at: string; item: InboxItem } | { kind: 'approval'; id: string; at: string; approval: Approval } | { kind: 'review'; id: string; at: string; task: Task };

export const KIND_LABEL: Record<InboxItem['kind'] | 'approval' | 'to_review', string> = {
  ask: 'Ask',
  answer: 'Answer',
  mention: 'Mention',
  review: 'Review of your work',
  assigned: 'Assigned',
  overdue: 'Overdue',
  budget: 'Budget',
  reply: 'Reply',
  changed: 'Changed',
  approval: 'Approval',
  to_review: 'To review',
};

/** The task an entry is about, for Enter and the title link. */
export function taskOf(entry: Entry): string | null {
  if (entry.kind === 'item') return entry.item.task_id;
  if (entry.kind === 'review') return entry.task.id;
  return entry.approval.target?.id.startsWith('tsk_') ? entry.approval.target.id : null;
}

/** "Due in 9m 05s" (the exact time on hover), ticking, then "Past due by 12s": how long is left reads faster than a date. */
function DueIn({ at }: { at: string }) {
  const text = dueIn(at, useNow(1000));
  return (
    <p class="small muted" title={exact(at)} data-testid="ask-due">
      {text.charAt(0).toUpperCase() + text.slice(1)}
    </p>
  );
}

/**
 * An ask, answered in place: its options as buttons, or a free-text answer; closed asks say how they
 * closed. Reads the ask by id, unless `ask` hands it over as its list read it (the task page).
 * `asker` says who asked, where nothing else on the page does (the inbox).
 */
export function AskAnswer({ askId, ask: given, asker = false, onAnswered }: { askId: string; ask?: Ask; asker?: boolean; onAnswered: (what: string) => void }) {
  const [ask, setAsk] = useState<Ask | null>(given ?? null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [text, setText] = useState('');
  const action = useAction();
  useEffect(() => {
    if (given) setAsk(given);
    else call('asks_get', { id: askId }).then(setAsk, (error: unknown) => setProblem(problemOf(error)));
  }, [askId, given]);
  if (problem) return <ProblemNotice problem={problem} />;
  if (!ask) return null;
  const answer = (body: { option: string } | { text: string }) =>
    action.send({ operation: 'asks_answer', input: { id: ask.id, ...body } }, (answered) => {
      setAsk(answered);
      onAnswered(`Answered “${answered.question}”: ${answered.answer?.option ?? answered.answer?.text ?? ''}.`);
    });
  const askedBy = asker && (
    <p class="small muted" data-testid="asked-by">
      Asked by <ActorChip actor={ask.asked_by} />
    </p>
  );
  if (ask.status !== 'open') {
    return (
      <>
        {askedBy}
        <p class="small" data-testid="ask-closed">
          {ask.status === 'cancelled' ? 'Cancelled.' : `${ask.status === 'defaulted' ? 'The default applied' : 'Answered'}: “${ask.answer?.option ?? ask.answer?.text ?? ''}”`}
          {ask.answered_by && (
            <>
              {' '}
              by <ActorChip actor={ask.answered_by} />
            </>
          )}
        </p>
      </>
    );
  }
  return (
    <div class="inbox-answer">
      {askedBy}
      <DueIn at={ask.due_at} />
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {ask.options.length > 0 ? (
        <div class="inbox-actions" role="group" aria-label={`Answers to “${ask.question}”`}>
          {ask.options.map((o) => (
            <button key={o.label} type="button" class="button" disabled={action.busy} onClick={() => void answer({ option: o.label })}>
              {o.label}
            </button>
          ))}
        </div>
      ) : (
        <form
          class="inbox-actions"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) void answer({ text: text.trim() });
          }}
        >
          <input type="text" aria-label={`Your answer to “${ask.question}”`} maxLength={2000} value={text} onInput={(e) => setText(e.currentTarget.value)} placeholder="Your answer" />
          <button type="submit" class="button-primary" disabled={action.busy || !text.trim()}>
            Answer
          </button>
        </form>
      )}
    </div>
  );
}

/** A pending approval, approved or denied in place (with an optional reason). */
export function ApprovalDecision({ approval, onDecided }: { approval: Approval; onDecided: (what: string) => void }) {
  const { manifest } = useSession();
  const context = useContextOf(approval);
  const [reason, setReason] = useState('');
  const action = useAction();
  const decide = (verb: 'approve' | 'deny') => action.send({ operation: verb === 'approve' ? 'approvals_approve' : 'approvals_deny', input: { id: approval.id, ...(reason.trim() ? { reason: reason.trim() } : {}) } }, (decided) =>
      onDecided(`${decided.status === 'denied' ? 'Denied' : decided.status === 'failed' ? 'Approved, but it failed:' : 'Approved:'} ${approval.operation}.`),
    );
  return (
    <>
      <p class="inbox-excerpt">
        <code>{approval.operation}</code> {manifest.operations.find((o) => o.name === approval.operation)?.summary}
      </p>
      <p class="small">
        Asked by <ActorChip actor={approval.requested_by} />
      </p>
      <TargetContext approval={approval} context={context} />
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      <div class="inbox-actions">
        <input type="text" aria-label={`Reason for deciding ${approval.operation} (optional)`} maxLength={500} placeholder="Reason (optional)" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        <button type="button" class="button-primary" disabled={action.busy} onClick={() => void decide('approve')}>
          Approve
        </button>
        <button type="button" class="button-danger" disabled={action.busy} onClick={() => void decide('deny')}>
          Deny
        </button>
      </div>
    </>
  );
}

/** Work in review, approved or sent back with a comment in place (tasks_review, with If-Match). */
/** A mention written by id (`@agt_…`, as an agent may) reads as the principal's name where it is known. */
function namedMentions(text: string, names: ReadonlyMap<string, string>): string {
  return text.replace(/@(agt_[0-9A-Z]{26})\b/g, (mention, id: string) => (names.has(id) ? `@${names.get(id)}` : mention));
}

/** Who handed the work in and what they said of it (Markdown, as on the task page), for deciding the review from the inbox. */
function HandedIn({ handoff }: { handoff: NonNullable<Task['handoff']> }) {
  const summary = handoff.summary.length > 300 ? `${handoff.summary.slice(0, 300)}…` : handoff.summary;
  return (
    <div data-testid="handoff">
      <p class="inbox-handed-in">
        Handed in by <ActorChip actor={handoff.by} />
        {summary ? ': ' : ' with no summary.'}
      </p>
      {summary && <Markdown class="handoff-summary" source={summary} />}
    </div>
  );
}

function ReviewDecision({ task, onDecided }: { task: Task; onDecided: (what: string) => void }) {
  const [comment, setComment] = useState('');
  const [needComment, setNeedComment] = useState(false);
  const commentField = useRef<HTMLInputElement>(null);
  const action = useAction();
  const review = (decision: 'approve' | 'request_changes') => {
    if (decision === 'request_changes' && !comment.trim()) {
      // Where the missing comment goes, so it can be typed at once.
      commentField.current?.focus();
      return setNeedComment(true);
    }
    setNeedComment(false);
    void action.send({ operation: 'tasks_review', input: { id: task.id, decision, ...(comment.trim() ? { comment: comment.trim() } : {}) }, ifMatch: task.version }, () =>
      onDecided(`${decision === 'approve' ? 'Approved' : 'Changes requested on'} “${task.title}”.`),
    );
  };
  const commentId = `review-comment-${task.id}`;
  return (
    <>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {needComment && (
        <p class="notice-title" role="alert">
          Say what to change: a request for changes needs a comment.
        </p>
      )}
      <div class="inbox-actions">
        <input id={commentId} ref={commentField} type="text" aria-label={`Comment on “${task.title}”`} aria-invalid={needComment} maxLength={4000} placeholder="Comment (needed to request changes)" value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
        <button type="button" class="button-primary" disabled={action.busy} onClick={() => review('approve')}>
          Approve
        </button>
        <button type="button" class="button" disabled={action.busy} onClick={() => review('request_changes')}>
          Request changes
        </button>
      </div>
    </>
  );
}

/** One entry of the inbox: what it is, who caused it, when, and what can be done with it here. */
export function InboxEntry({ entry, focused, now, onChanged, onMark }: { entry: Entry; focused: boolean; now: number; onChanged: (what: string) => void; onMark: (item: InboxItem, state: InboxItem['state']) => void }) {
  const names = useNames(entry.kind === 'item' ? [entry.item.by] : []);
  const task = taskOf(entry);
  const kind = entry.kind === 'item' ? entry.item.kind : entry.kind === 'approval' ? 'approval' : 'to_review';
  // What waits on a decision stands out like an unread item until it is decided.
  const unread = entry.kind !== 'item' || entry.item.state === 'unread';
  const overdue = entry.kind === 'item' ? entry.item.overdue_at !== undefined : entry.kind === 'approval' ? entry.approval.overdue_at !== undefined : entry.task.review_overdue === true;
  const title =
    entry.kind === 'item' ? (['ask', 'overdue', 'approval', 'budget'].includes(entry.item.kind) ? entry.item.excerpt : `${KIND_LABEL[entry.item.kind]} by ${names.get(entry.item.by) ?? entry.item.by}`) : entry.kind === 'review' ? entry.task.title : `Approve ${entry.approval.operation}?`;
  return (
    <li class={`card inbox-item${unread ? ' inbox-item-unread' : ''}${focused ? ' inbox-item-focused' : ''}`} data-entry={entry.id} data-kind={kind} data-state={entry.kind === 'item' ? entry.item.state : 'waiting'}>
      <div class="inbox-head">
        <span class="inbox-kind">{KIND_LABEL[kind]}</span>
        <h2>
          {task ? (
            <a class="inbox-link" href={`/tasks/${task}`} onClick={() => entry.kind === 'item' && entry.item.state === 'unread' && onMark(entry.item, 'read')}>
              {title}
            </a>
          ) : (
            <a class="inbox-link" href="/approvals">
              {title}
            </a>
          )}
        </h2>
        <span class="muted small" title={exact(entry.at)}>
          {ago(entry.at, now)}
        </span>
        {overdue && kind !== 'overdue' && <span class="overdue small">Overdue</span>}
        {entry.kind === 'item' && entry.item.state === 'unread' && <span class="sr-only">(unread)</span>}
      </div>
      {entry.kind === 'item' && !['ask', 'overdue', 'approval', 'budget'].includes(entry.item.kind) && entry.item.excerpt && <p class="inbox-excerpt">{namedMentions(entry.item.excerpt, names)}</p>}
      {entry.kind === 'item' && entry.item.kind === 'overdue' && <p class="inbox-excerpt">Past its SLA: {names.get(entry.item.by) ?? entry.item.by} is still waiting.</p>}
      {entry.kind === 'item' && entry.item.kind === 'budget' && (
        <p class="inbox-excerpt">
          A run of {names.get(entry.item.by) ?? entry.item.by} on this task spent it. The task's runs list its budgets; raise it with <code>baton budgets raise {entry.item.ref_id}</code>.
        </p>
      )}
      {entry.kind === 'item' && entry.item.kind === 'ask' && <AskAnswer askId={entry.item.ref_id} asker onAnswered={onChanged} />}
      {entry.kind === 'approval' && <ApprovalDecision approval={entry.approval} onDecided={onChanged} />}
      {entry.kind === 'review' && entry.task.handoff && <HandedIn handoff={entry.task.handoff} />}
      {entry.kind === 'review' && <ReviewDecision task={entry.task} onDecided={onChanged} />}
      {entry.kind === 'item' && (
        <div class="inbox-actions">
          {entry.item.state === 'unread' && (
            <button type="button" class="button-quiet" onClick={() => onMark(entry.item, 'read')}>
              Mark read
            </button>
          )}
          {entry.item.state === 'read' && (
            <button type="button" class="button-quiet" onClick={() => onMark(entry.item, 'unread')}>
              Mark unread
            </button>
          )}
          {entry.item.state !== 'done' ? (
            <button type="button" class="button-quiet" aria-keyshortcuts="e" onClick={() => onMark(entry.item, 'done')}>
              Done
            </button>
          ) : (
            <button type="button" class="button-quiet" onClick={() => onMark(entry.item, 'unread')}>
              Back to unread
            </button>
          )}
        </div>
      )}
    </li>
  );
}
