import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import type { OutputOf } from '../../../src/client/index.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { ActorChip, Loading, ProblemNotice, StatusBadge } from '../components.tsx';
import { ago, exact, timeLeft } from '../format.ts';
import { focusedItem, type Selection, useSelection } from '../bulk.ts';
import { useNow, useShortcuts } from '../hooks.ts';
import { BulkBar, BulkResults, SelectBox, useBulk } from './bulk-bar.tsx';
import { useConfirm } from '../confirm.tsx';
import { useEvents, useSession } from '../session.ts';
import type { Agent, Approval, Task } from '../types.ts';

/** The resource an approval acts on, read now: a task, a webhook or a principal (by id prefix). */
type Target = { kind: 'task'; value: Task } | { kind: 'webhook'; value: OutputOf<'webhooks_get'> } | { kind: 'agent'; value: Agent };

/** Reads the resource with this id, by its prefix; null for a kind the page does not show. */
function readTarget(id: string): Promise<Target> | null {
  switch (id.slice(0, 4)) {
    case 'tsk_':
      return call('tasks_get', { id }).then((value) => ({ kind: 'task', value: value as Task }));
    case 'whk_':
      return call('webhooks_get', { id }).then((value) => ({ kind: 'webhook', value }));
    case 'agt_':
      return call('agents_get', { id }).then((value) => ({ kind: 'agent', value }));
    default:
      return null;
  }
}

interface TargetState {
  target: Target | null;
  gone: boolean;
  /** Why the target could not be read (other than being gone), with a way to read it again. */
  problem: Problem | null;
  retry: () => void;
}

/** The target as it is now (null while loading or when it is gone). */
export function useContextOf(approval: Approval): TargetState {
  const [target, setTarget] = useState<Target | null>(null);
  const [gone, setGone] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);
  const id = approval.target?.id ?? (typeof approval.input.id === 'string' ? approval.input.id : null);
  useEffect(() => {
    const reading = id ? readTarget(id) : null;
    if (reading) {
      reading.then(
        setTarget,
        (error: unknown) => {
          const why = problemOf(error);
          if (why.status === 404) setGone(true);
          else setProblem(why);
        },
      );
    }
  }, [approval.id, id, attempt]);
  const retry = () => {
    setProblem(null);
    setAttempt((n) => n + 1);
  };
  return { target, gone, problem, retry };
}

const show = (value: unknown) =>
  value === undefined || value === null ? '—' : typeof value === 'string' ? value : Array.isArray(value) ? value.map(String).join(', ') : JSON.stringify(value);

/** "Expires in 23h 59m" or "Expired 5m 00s ago". */
function expiry(expiresAt: string, now: number): string {
  const left = timeLeft(expiresAt, now);
  return left.endsWith(' left') ? `Expires in ${left.slice(0, -' left'.length)}` : `E${left.slice(1)}`;
}

/** What the approval touches, in words, and for an update the fields it changes (now → after). */
export function TargetContext({ approval, context: { target, gone, problem, retry } }: { approval: Approval; context: TargetState }) {
  if (gone) return <p class="muted">The resource it acts on no longer exists.</p>;
  if (problem) return <ProblemNotice problem={{ ...problem, title: `Could not read what it acts on: ${problem.title}` }} onRetry={retry} />;
  if (!target) return null;
  const changes = approval.operation.endsWith('_update')
    ? Object.entries(approval.input).filter(([name, value]) => name !== 'id' && JSON.stringify((target.value as Record<string, unknown>)[name]) !== JSON.stringify(value))
    : [];
  return (
    <div class="approval-target" data-testid="approval-target">
      {target.kind === 'task' && (
        <p>
          Task <a href={`/tasks/${target.value.id}`}>{target.value.title}</a> <StatusBadge status={target.value.status} />
        </p>
      )}
      {target.kind === 'webhook' && (
        <p>
          Webhook to <code class="approval-url">{target.value.url}</code> for {target.value.event_types?.join(', ') ?? 'every event type'}
        </p>
      )}
      {target.kind === 'agent' && (
        <p>
          {target.value.kind === 'human' ? 'Human' : 'Agent'} <a href={`/agents/${target.value.id}`}>{target.value.name}</a>
        </p>
      )}
      {changes.length > 0 && (
        <table class="table diff" aria-label="Changes">
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Now</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {changes.map(([name, value]) => (
              <tr key={name} data-field={name}>
                <td>{name}</td>
                <td class="diff-before">{show((target.value as Record<string, unknown>)[name])}</td>
                <td class="diff-after">{show(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** "DELETE /api/v1/tasks/tsk_…": the request the approval will run, from the manifest's operation. */
function requestLine(approval: Approval, operations: { name: string; method: string; path: string }[]): string {
  const op = operations.find((o) => o.name === approval.operation);
  if (!op) return approval.operation;
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = approval.input[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : `{${name}}`;
  });
  return `${op.method} ${path}`;
}

function ApprovalCard({ approval, onDecided, selection, order }: { approval: Approval; onDecided: (a: Approval) => void; selection: Selection; order: () => readonly string[] }) {
  const { manifest } = useSession();
  const now = useNow(5_000);
  const [reason, setReason] = useState('');
  const { busy, problem, dismiss, send } = useAction();
  const decide = (verb: 'approve' | 'deny') => send({ operation: verb === 'approve' ? 'approvals_approve' : 'approvals_deny', input: { id: approval.id, ...(reason.trim() ? { reason: reason.trim() } : {}) } }, onDecided);
  const inputs = Object.entries(approval.input);
  const summary = manifest.operations.find((o) => o.name === approval.operation)?.summary;
  const context = useContextOf(approval);
  return (
    <article class="card approval" aria-labelledby={`${approval.id}-title`} data-approval-id={approval.id}>
      <header class="approval-head">
        <h2 id={`${approval.id}-title`} class="select-line">
          <SelectBox id={approval.id} label={`${approval.operation} ${approval.id}`} selection={selection} order={order} />
          <code>{approval.operation}</code>
        </h2>
        <span class="muted small" data-testid="requested">
          requested {ago(approval.created_at, now)} by <ActorChip actor={approval.requested_by} />
          {' '}
          from machine <strong>{approval.requested_machine}</strong>
        </span>
      </header>
      {summary && <p>{summary}</p>}
      <TargetContext approval={approval} context={context} />
      <p class="approval-expiry small" title={exact(approval.expires_at)}>
        {expiry(approval.expires_at, now)}
      </p>
      <p class="will-run-label">What will run, exactly, as the requester:</p>
      <pre class="will-run">{requestLine(approval, manifest.operations)}</pre>
      <dl class="facts">
        {inputs.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name}</dt>
            <dd>
              <code>{JSON.stringify(value)}</code>
            </dd>
          </Fragment>
        ))}
        {approval.target && (
          <>
            <dt>target</dt>
            <dd>
              {approval.target.id.startsWith('tsk_') ? <a href={`/tasks/${approval.target.id}`}>{approval.target.id}</a> : <code>{approval.target.id}</code>} at version{' '}
              {approval.target.version}
            </dd>
          </>
        )}
      </dl>
      {problem && <ProblemNotice problem={problem} onDismiss={dismiss} />}
      <div class="approval-actions">
        <label class="sr-only" for={`${approval.id}-reason`}>
          Reason (optional)
        </label>
        <input id={`${approval.id}-reason`} type="text" maxLength={500} placeholder="Reason (optional)" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        <button type="button" class="button-primary" disabled={busy} onClick={() => void decide('approve')}>
          Approve
        </button>
        <button type="button" class="button-danger" disabled={busy} onClick={() => void decide('deny')}>
          Deny
        </button>
      </div>
    </article>
  );
}

const OUTCOME: Record<Approval['status'], string> = {
  approved: 'Approved: it ran',
  failed: 'Approved, but the operation failed and was undone',
  denied: 'Denied: it will not run',
  expired: 'Expired',
  pending: 'Pending',
};

const DECIDED: Record<Approval['status'], string> = { approved: 'Approved and ran', failed: 'Approved; the operation failed', denied: 'Denied', expired: 'Expired undecided', pending: 'Pending' };

/** Decided approvals, newest first: who decided, when, why, and what came of it. */
function History() {
  const now = useNow(30_000);
  const [list, setList] = useState<Approval[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    call('approvals_list', { limit: 100 }).then(
      (page) => {
        setList(page.data.filter((a) => a.status !== 'pending'));
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => void load(), []);
  useEvents((event) => {
    if (event.type.startsWith('approval.')) void load();
  });
  if (problem) return <ProblemNotice problem={problem} onRetry={() => void load()} />;
  if (!list) return <Loading what="decided approvals" />;
  if (list.length === 0) return <p class="empty">No approval has been decided yet.</p>;
  return (
    <ol class="history" aria-label="Decided approvals">
      {list.map((a) => (
        <li key={a.id} class={`card history-item notice-${a.status}`} data-history={a.id}>
          <div class="history-line">
            <strong>{DECIDED[a.status]}</strong> <code>{a.operation}</code>
            {a.target && <span class="muted small">on {a.target.id.startsWith('tsk_') ? <a href={`/tasks/${a.target.id}`}>{a.target.id}</a> : <code>{a.target.id}</code>}</span>}
          </div>
          <p class="small">
            Asked by <ActorChip actor={a.requested_by} /> {ago(a.created_at, now)}
            {a.decided_by && (
              <>
                {' '}
                · decided by <ActorChip actor={a.decided_by} />
              </>
            )}
            {a.decided_at && <span title={exact(a.decided_at)}> {ago(a.decided_at, now)}</span>}
          </p>
          {a.reason && <p class="history-reason">“{a.reason}”</p>}
        </li>
      ))}
    </ol>
  );
}

/** Offers browser notifications for new approvals (the shell shows them) until the user answers. */
function NotifyButton() {
  const supported = typeof Notification !== 'undefined';
  const [permission, setPermission] = useState(supported ? Notification.permission : 'denied');
  if (permission !== 'default') return null;
  return (
    <button type="button" class="button" onClick={() => void Notification.requestPermission().then(setPermission)}>
      Notify me of new approvals
    </button>
  );
}

/** Approving deletes in bulk: what the confirmation asks. */
const approveDeletes = (n: number) => ({
  title: `Approve ${n} delete${n === 1 ? '' : 's'}?`,
  body: `${n === 1 ? 'One of the selected approvals deletes' : `${n} of the selected approvals delete`} what it acts on, at once and for good; the rest run as asked.`,
  confirm: `Approve and delete`,
});

/** Pending approvals, decided here one by one; decisions made on this page stay listed with their outcome. */
export function Approvals() {
  const [tab, setTab] = useState<'pending' | 'history'>('pending');
  const [pending, setPending] = useState<Approval[] | null>(null);
  const [more, setMore] = useState(false);
  const [decided, setDecided] = useState<Approval[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    call('approvals_list', { status: 'pending', limit: 100 }).then(
      (page) => {
        setPending(page.data);
        setMore(page.has_more);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => void load(), []);
  useEvents((event) => {
    if (event.type.startsWith('approval.')) void load();
  });
  const selection = useSelection();
  const bulk = useBulk(selection, () => void load());
  const [bulkReason, setBulkReason] = useState('');
  const order = () => pending?.map((a) => a.id) ?? [];
  // What each selected approval is called, kept when another lead decides it meanwhile: it is sent all the same and its refusal says why.
  const seen = useRef(new Map<string, string>());
  for (const a of pending ?? []) seen.current.set(a.id, `${a.operation} (${a.id})`);
  useShortcuts({
    x: (event) => {
      const id = focusedItem('data-approval-id');
      if (!id) return;
      event.preventDefault();
      selection.toggle(id, order());
    },
  });
  const confirm = useConfirm();
  const decideSelected = async (verb: 'approve' | 'deny') => {
    // Approving a delete runs it: asked first, as deleting from the task page is.
    const deletes = (pending ?? []).filter((a) => selection.selected.has(a.id) && a.operation.endsWith('_delete')).length;
    if (verb === 'approve' && deletes > 0 && !(await confirm.ask(approveDeletes(deletes)))) return;
    await bulk.run(
      verb === 'approve' ? 'Approve' : 'Deny',
      [...selection.selected].map((id) => ({ id, label: seen.current.get(id) ?? id })),
      (item) => {
        const input = { id: item.id, ...(bulkReason.trim() ? { reason: bulkReason.trim() } : {}) };
        return verb === 'approve' ? { operation: 'approvals_approve', input } : { operation: 'approvals_deny', input };
      },
    );
  };
  const onDecided = (approval: Approval) => {
    setDecided((current) => [approval, ...current]);
    setPending((current) => current?.filter((a) => a.id !== approval.id) ?? null);
  };

  return (
    <section class="page" aria-labelledby="approvals-title">
      <div class="page-head">
        <h1 id="approvals-title">Approvals</h1>
        <NotifyButton />
        <p class="muted page-lede">Destructive and outward-facing operations wait here for a human decision.</p>
        <div class="tabs" role="group" aria-label="Show">
          <button type="button" class="tab" aria-pressed={tab === 'pending'} onClick={() => setTab('pending')}>
            Pending{pending ? ` (${pending.length}${more ? '+' : ''})` : ''}
          </button>
          <button type="button" class="tab" aria-pressed={tab === 'history'} onClick={() => setTab('history')}>
            History
          </button>
        </div>
      </div>
      {tab === 'history' && <History />}
      {confirm.dialog}
      {tab === 'pending' && problem && <ProblemNotice problem={problem} onRetry={() => void load()} />}
      {tab === 'pending' && bulk.report && <BulkResults report={bulk.report} onDismiss={bulk.dismiss} />}
      {tab === 'pending' && (
        <BulkBar selection={selection} matching={order()} noun="approval" busy={bulk.busy}>
          <input type="text" aria-label="Reason for every selected approval (optional)" maxLength={500} placeholder="Reason (optional)" value={bulkReason} onInput={(e) => setBulkReason(e.currentTarget.value)} />
          <button type="button" class="button-primary" disabled={bulk.busy} onClick={() => void decideSelected('approve')}>
            Approve {selection.selected.size}
          </button>
          <button type="button" class="button-danger" disabled={bulk.busy} onClick={() => void decideSelected('deny')}>
            Deny {selection.selected.size}
          </button>
        </BulkBar>
      )}
      {tab === 'pending' && decided.map((a) => (
        <div key={a.id} class={`notice notice-${a.status}`} role="status" data-decided={a.id}>
          <strong>{OUTCOME[a.status]}</strong> — <code>{a.operation}</code>
          {a.result && <span class="muted"> (answered {a.result.status})</span>}
          {a.status === 'failed' && typeof (a.result?.body as Problem | undefined)?.detail === 'string' && <p>{(a.result?.body as Problem).detail}</p>}
        </div>
      ))}
      {tab === 'pending' && !pending && !problem && <Loading what="approvals" />}
      {tab === 'pending' && pending && pending.length === 0 && <p class="empty">Nothing is waiting for a decision.</p>}
      {tab === 'pending' && pending?.map((a) => <ApprovalCard key={a.id} approval={a} onDecided={onDecided} selection={selection} order={order} />)}
      {tab === 'pending' && more && <p class="muted" role="status">These are the first 100 pending approvals; more wait behind them and show as these are decided.</p>}
    </section>
  );
}
