import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiProblem, get, newKey, type Page, type Problem, write } from '../api.ts';
import { ActorChip, Loading, ProblemNotice } from '../components.tsx';
import { ago, exact } from '../format.ts';
import { useNow } from '../hooks.ts';
import { useEvents, useSession } from '../session.ts';
import type { Approval } from '../types.ts';

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

function ApprovalCard({ approval, onDecided }: { approval: Approval; onDecided: (a: Approval) => void }) {
  const { manifest } = useSession();
  const now = useNow(15_000);
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const decide = async (verb: 'approve' | 'deny') => {
    setBusy(true);
    setProblem(null);
    try {
      const body = reason.trim() ? { reason: reason.trim() } : {};
      onDecided(await write<Approval>('POST', `/approvals/${approval.id}/${verb}`, { key: newKey(), body }));
    } catch (error) {
      if (error instanceof ApiProblem) setProblem(error.problem);
    } finally {
      setBusy(false);
    }
  };
  const inputs = Object.entries(approval.input);
  const summary = manifest.operations.find((o) => o.name === approval.operation)?.summary;
  return (
    <article class="card approval" aria-labelledby={`${approval.id}-title`} data-approval-id={approval.id}>
      <header class="approval-head">
        <h2 id={`${approval.id}-title`}>
          <code>{approval.operation}</code>
        </h2>
        <span class="muted small">
          requested {ago(approval.created_at, now)} by <ActorChip actor={approval.requested_by} />
        </span>
      </header>
      {summary && <p>{summary}</p>}
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
        <dt>expires</dt>
        <dd>{exact(approval.expires_at)}</dd>
      </dl>
      {problem && <ProblemNotice problem={problem} onDismiss={() => setProblem(null)} />}
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

/** Pending approvals, decided here one by one; decisions made on this page stay listed with their outcome. */
export function Approvals() {
  const [pending, setPending] = useState<Approval[] | null>(null);
  const [decided, setDecided] = useState<Approval[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    get<Page<Approval>>('/approvals?status=pending&limit=100').then(
      (page) => setPending(page.data),
      (error: unknown) => setProblem(error instanceof ApiProblem ? error.problem : null),
    );
  useEffect(() => void load(), []);
  useEvents((event) => {
    if (event.type.startsWith('approval.')) void load();
  });
  const onDecided = (approval: Approval) => {
    setDecided((current) => [approval, ...current]);
    setPending((current) => current?.filter((a) => a.id !== approval.id) ?? null);
  };

  return (
    <section class="page" aria-labelledby="approvals-title">
      <div class="page-head">
        <h1 id="approvals-title">Approvals</h1>
        <p class="muted">Destructive and outward-facing operations wait here for a human decision.</p>
      </div>
      {problem && <ProblemNotice problem={problem} />}
      {decided.map((a) => (
        <div key={a.id} class={`notice notice-${a.status}`} role="status" data-decided={a.id}>
          <strong>{OUTCOME[a.status]}</strong> — <code>{a.operation}</code>
          {a.result && <span class="muted"> (answered {a.result.status})</span>}
          {a.status === 'failed' && typeof (a.result?.body as Problem | undefined)?.detail === 'string' && <p>{(a.result?.body as Problem).detail}</p>}
        </div>
      ))}
      {!pending && !problem && <Loading what="approvals" />}
      {pending && pending.length === 0 && <p class="empty">Nothing is waiting for a decision.</p>}
      {pending?.map((a) => <ApprovalCard key={a.id} approval={a} onDecided={onDecided} />)}
    </section>
  );
}
