import { useEffect, useState } from 'preact/hooks';
import type { InputOf, OutputOf } from '../../../src/client/index.ts';
import { useAction } from '../action.ts';
import { getAll, type ItemOf, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';
import { useConfirm } from '../confirm.tsx';
import { exact } from '../format.ts';
import { SecretOnce } from '../secret-once.tsx';

type Webhook = ItemOf<'webhooks_list'>;
type Delivery = ItemOf<'webhooks_deliveries'>;
type EventType = NonNullable<InputOf<'webhooks_create'>['event_types']>[number];

/** The event types an integration usually wants, offered as choices; the API and `baton webhooks` take every type. */
const COMMON_TYPES: readonly EventType[] = [
  'task.created',
  'task.status_changed',
  'task.claimed',
  'task.handed_in',
  'task.changes_requested',
  'task.attempt_failed',
  'task.dead_lettered',
  'task.overdue',
  'comment.created',
  'comment.mentioned',
  'ask.created',
  'ask.answered',
  'ask.overdue',
  'approval.requested',
  'lease.expired',
  'budget.warning',
  'budget.exhausted',
];


/**
 * Webhooks: the URLs events are POSTed to, signed (spec/realtime.md). Subscribe one (its signing
 * secret is shown once), see each one's recent deliveries and their attempts, turn one off and on,
 * rotate its secret, delete it.
 */
export function Webhooks() {
  const [webhooks, setWebhooks] = useState<Webhook[] | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [secret, setSecret] = useState<{ id: string; value: string } | null>(null);
  const [waiting, setWaiting] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const action = useAction();
  const confirm = useConfirm();
  const load = () =>
    getAll('webhooks_list', {}).then(
      (res) => {
        setWebhooks(res.data);
        setLoadProblem(null);
      },
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  useEffect(() => void load(), []);

  /** After a write: the approval it waits for, or the secret it revealed; then the list again. */
  const settle = async (answer: OutputOf<'webhooks_create'> | OutputOf<'webhooks_update'>) => {
    // A gated write answers 202 with the approval it waits for (as task-delete.tsx reads it).
    const approval = 'operation' in answer ? answer.id : null;
    setWaiting(approval);
    if (!approval && 'secret' in answer && answer.secret) setSecret({ id: answer.id, value: answer.secret });
    await load();
  };
  const toggle = (w: Webhook) => void action.send({ operation: 'webhooks_update', input: { id: w.id, enabled: !w.enabled }, ifMatch: w.version }, settle);
  const rotate = async (w: Webhook) => {
    const yes = await confirm.ask({ title: 'Rotate the signing secret?', body: `Deliveries to ${w.url} are signed with a new secret from now on; the receiver must switch to it, as the old one stops verifying at once.`, confirm: 'Rotate secret' });
    if (yes) void action.send({ operation: 'webhooks_rotate_secret', input: { id: w.id } }, settle);
  };
  const remove = async (w: Webhook) => {
    const yes = await confirm.ask({ title: 'Delete this webhook?', body: `Nothing more is delivered to ${w.url}. Its delivery log is kept.`, confirm: 'Delete webhook' });
    if (yes) void action.send({ operation: 'webhooks_delete', input: { id: w.id } }, settle);
  };

  return (
    <section class="page" aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p class="muted">Baton POSTs each matching event to these URLs, signed (Standard Webhooks), and retries what fails.</p>
      {confirm.dialog}
      {secret && (
        <SecretOnce label="Signing secret" value={secret.value} testId="webhook-secret" onDone={() => setSecret(null)}>
          <p>Your receiver verifies each delivery with it ({secret.id}). Store it in a secret manager, not in a repository.</p>
        </SecretOnce>
      )}
      {waiting && (
        <p class="notice" role="status">
          This change waits for a human’s approval: see <a href="/approvals">Approvals</a> ({waiting}).
        </p>
      )}
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      <NewWebhook busy={action.busy} onCreate={async (input) => (await action.send({ operation: 'webhooks_create', input }, settle)) === null} />
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!webhooks ? (
        !loadProblem && <Loading what="webhooks" />
      ) : webhooks.length === 0 ? (
        <p class="muted">No webhooks yet.</p>
      ) : (
        <ul class="webhook-list">
          {webhooks.map((w) => (
            <li key={w.id} class="card" data-webhook-id={w.id}>
              <div class="webhook-head">
                <code class="webhook-url">{w.url}</code>
                {w.enabled ? <span class="status status-done">Enabled</span> : <span class="status status-blocked">Disabled</span>}
              </div>
              <p class="small muted">
                {w.event_types ? w.event_types.join(', ') : 'Every event'} · created {exact(w.created_at)}
                {w.disabled_reason && <> · disabled by the server: {w.disabled_reason}</>}
              </p>
              <div class="webhook-actions">
                <button type="button" class="button" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? null : w.id)}>
                  {open === w.id ? 'Hide deliveries' : 'Deliveries'}
                </button>
                <button type="button" class="button" disabled={action.busy} onClick={() => toggle(w)}>
                  {w.enabled ? 'Disable' : 'Enable'}
                </button>
                <button type="button" class="button" disabled={action.busy} onClick={() => void rotate(w)}>
                  Rotate secret
                </button>
                <button type="button" class="button-danger" disabled={action.busy} onClick={() => void remove(w)}>
                  Delete
                </button>
              </div>
              {open === w.id && <Deliveries webhookId={w.id} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The form that subscribes a URL: every event, or the types chosen; `onCreate` answers whether it was added. */
function NewWebhook({ busy, onCreate }: { busy: boolean; onCreate: (input: InputOf<'webhooks_create'>) => Promise<boolean> }) {
  const [url, setUrl] = useState('');
  const [every, setEvery] = useState(true);
  const [chosen, setChosen] = useState<ReadonlySet<EventType>>(new Set(['task.created', 'task.status_changed']));
  const pick = (type: EventType, on: boolean) =>
    setChosen((was) => {
      const next = new Set(was);
      if (on) next.add(type);
      else next.delete(type);
      return next;
    });
  const submit = (event: Event) => {
    event.preventDefault();
    // Cleared once it is added; kept as typed when the server refused it, to correct.
    void onCreate({ url: url.trim(), ...(every ? {} : { event_types: [...chosen] }) }).then((added) => added && setUrl(''));
  };
  return (
    <form class="card webhook-form" onSubmit={submit} aria-labelledby="new-webhook-title">
      <h2 id="new-webhook-title">New webhook</h2>
      <label for="webhook-url">URL</label>
      <input id="webhook-url" type="url" required placeholder="https://hooks.example.com/baton" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      <fieldset>
        <legend>Events</legend>
        <label class="choice">
          <input type="radio" name="webhook-events" checked={every} onChange={() => setEvery(true)} /> Every event
        </label>
        <label class="choice">
          <input type="radio" name="webhook-events" checked={!every} onChange={() => setEvery(false)} /> Only these
        </label>
        {!every && (
          <div class="webhook-types">
            {COMMON_TYPES.map((type) => (
              <label key={type} class="choice">
                <input type="checkbox" checked={chosen.has(type)} onChange={(e) => pick(type, e.currentTarget.checked)} /> <code>{type}</code>
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <button type="submit" class="button-primary" disabled={busy || (!every && chosen.size === 0)}>
        Add webhook
      </button>
    </form>
  );
}

/** One webhook's latest hundred deliveries, newest event first, with the outcome of each one's last attempt. */
function Deliveries({ webhookId }: { webhookId: string }) {
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    getAll('webhooks_deliveries', { id: webhookId }, 1).then(
      (res) => setDeliveries(res.data),
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => void load(), [webhookId]);
  if (problem) return <ProblemNotice problem={problem} onRetry={() => void load()} />;
  if (!deliveries) return <Loading what="deliveries" />;
  if (deliveries.length === 0) return <p class="muted small">Nothing delivered yet: deliveries start with the events after the webhook was added.</p>;
  return (
    <div class="table-wrap">
      <table class="table deliveries">
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Next attempt</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => {
            const last = d.attempts.at(-1);
            return (
              <tr key={d.id}>
                <td>
                  <code class="small">{d.event_id}</code>
                </td>
                <td>{d.state}</td>
                <td>{d.attempts.length}</td>
                <td class="small">{last ? [last.status ?? 'no answer', last.error, `${last.duration_ms} ms`].filter(Boolean).join(' · ') : '—'}</td>
                <td class="small">{d.next_attempt_at ? exact(d.next_attempt_at) : '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
