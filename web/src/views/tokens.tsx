import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { getAll, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';
import { exact } from '../format.ts';
import { SecretOnce } from '../secret-once.tsx';
import type { IssuedToken, Token } from '../types.ts';

const EXPIRY = [
  { label: 'Never', seconds: 0 },
  { label: '1 day', seconds: 86_400 },
  { label: '30 days', seconds: 30 * 86_400 },
  { label: '1 year', seconds: 365 * 86_400 },
];

/** The token just created: shown once, with a copy button and a warning that it will not be shown again. */
function NewToken({ token, onDone }: { token: IssuedToken; onDone: () => void }) {
  return (
    <SecretOnce label="New token" value={token.token ?? ''} testId="new-token" onDone={onDone}>
      <p>Anyone holding it acts as this principal on machine “{token.machine}”. Store it in a secret manager, not in a repository.</p>
    </SecretOnce>
  );
}

/** A principal's tokens: create one per machine, revoke one at a time. */
export function Tokens({ agentId }: { agentId: string }) {
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [machine, setMachine] = useState('');
  const [expiry, setExpiry] = useState(0);
  const [created, setCreated] = useState<IssuedToken | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const action = useAction();
  const load = () =>
    getAll('tokens_list', { id: agentId }).then(
      (res) => {
        setTokens(res.data);
        setLoadProblem(null);
      },
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  useEffect(() => void load(), [agentId]);

  const create = (event: Event) => {
    event.preventDefault();
    const body = { machine: machine.trim(), ...(expiry ? { expires_in_s: expiry } : {}) };
    void action.send({ operation: 'tokens_create', input: { id: agentId, ...body } }, async (token) => {
      setCreated(token);
      setMachine('');
      await load();
    });
  };
  const revoke = (id: string) =>
    void action.send({ operation: 'tokens_revoke', input: { id } }, async () => {
      setConfirming(null);
      await load();
    });

  return (
    <section class="card" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Tokens</h2>
      {created && <NewToken token={created} onDone={() => setCreated(null)} />}
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      <form class="inline-form" onSubmit={create}>
        <label for="machine">Machine label</label>
        <input id="machine" required maxLength={64} pattern="[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}" placeholder="e.g. laptop-1" value={machine} onInput={(e) => setMachine(e.currentTarget.value)} />
        <label for="expiry">Expires</label>
        <select id="expiry" value={expiry} onChange={(e) => setExpiry(Number(e.currentTarget.value))}>
          {EXPIRY.map((x) => (
            <option key={x.seconds} value={x.seconds}>
              {x.label}
            </option>
          ))}
        </select>
        <button type="submit" class="button-primary">
          Create token
        </button>
      </form>
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!tokens ? (
        !loadProblem && <Loading what="tokens" />
      ) : tokens.length === 0 ? (
        <p class="muted">No tokens yet.</p>
      ) : (
        <div class="table-wrap">
          <table class="table tokens">
            <thead>
              <tr>
                <th scope="col">Machine</th>
                <th scope="col">Used</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.id} data-token-id={t.id}>
                  <td class="token-machine">
                    {t.machine}
                    <code class="small">{t.prefix}…</code>
                  </td>
                  <td class="small token-used">
                    <span>Last used {t.last_used_at ? exact(t.last_used_at) : 'never'}</span>
                    <span class="muted">Created {exact(t.created_at)}</span>
                  </td>
                  <td>
                    {t.revoked_at ? (
                      <span class="status status-cancelled">Revoked</span>
                    ) : t.expires_at && Date.parse(t.expires_at) < Date.now() ? (
                      <span class="status status-blocked">Expired</span>
                    ) : (
                      <span class="status status-done">Active</span>
                    )}
                  </td>
                  <td class="actions">
                    {!t.revoked_at &&
                      (confirming === t.id ? (
                        <>
                          <button type="button" class="button-danger" onClick={() => revoke(t.id)}>
                            Revoke now
                          </button>
                          <button type="button" class="button-quiet" onClick={() => setConfirming(null)}>
                            Cancel
                          </button>
                        </>
                      ) : (
                        <button type="button" class="button" onClick={() => setConfirming(t.id)} aria-label={`Revoke the token for ${t.machine}`}>
                          Revoke
                        </button>
                      ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
