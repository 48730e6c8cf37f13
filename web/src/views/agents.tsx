import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import type { Agent } from '../types.ts';
import { PrincipalForm, type PrincipalFields } from './principal-form.tsx';
import { PrincipalPicker } from '../principal-picker.tsx';

const NEW_AGENT: PrincipalFields = { name: '', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'], tool_allowlist: null };

/** Principals shown a page at a time: a fleet has thousands, found by name with the picker. */
const PAGE = 100;

/** The principals (humans and agents), newest first a hundred at a time, any of them found by name; and a form to add one. */
export function Agents() {
  const { names } = useSession();
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [more, setMore] = useState<string | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [creating, setCreating] = useState(false);
  const [kind, setKind] = useState<'agent' | 'human'>('agent');
  const [reading, setReading] = useState(false);
  const action = useAction();
  /** Reads the next page after `cursor` (the first when null) and adds it to what is shown. */
  const load = (cursor: string | null) => {
    setLoadProblem(null);
    setReading(true);
    call('agents_list', { limit: PAGE, ...(cursor ? { cursor } : {}) })
      .then(
        (page) => {
          setAgents((shown) => [...(cursor ? (shown ?? []) : []), ...page.data]);
          setMore(page.has_more ? page.next_cursor : null);
        },
        (error: unknown) => setLoadProblem(problemOf(error)),
      )
      .finally(() => setReading(false));
  };
  useEffect(() => load(null), []);
  const create = (fields: PrincipalFields) =>
    action.send({ operation: 'agents_create', input: { ...fields, kind } }, (agent) => {
      names.set(agent.id, agent.name);
      navigate(`/agents/${agent.id}`);
    });
  return (
    <section class="page" aria-labelledby="agents-title">
      <div class="page-head">
        <h1 id="agents-title">Agents and humans</h1>
        <div class="field agents-find">
          <label for="agents-find">Find by name</label>
          <PrincipalPicker id="agents-find" value="" onChange={(id) => id && navigate(`/agents/${id}`)} />
        </div>
        {!creating && (
          <button type="button" class="button-primary" onClick={() => setCreating(true)}>
            New principal
          </button>
        )}
      </div>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {creating && (
        <section class="card">
          <h2>New principal</h2>
          <PrincipalForm initial={NEW_AGENT} submitLabel="Create" busy={action.busy} onSubmit={(f) => void create(f)}>
            <fieldset>
              <legend>Kind</legend>
              <label class="check">
                <input type="radio" name="kind" checked={kind === 'agent'} onChange={() => setKind('agent')} /> Agent (software)
              </label>
              <label class="check">
                <input type="radio" name="kind" checked={kind === 'human'} onChange={() => setKind('human')} /> Human
              </label>
            </fieldset>
          </PrincipalForm>
        </section>
      )}
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => load(agents === null ? null : more)} />}
      {!agents && !loadProblem && <Loading what="principals" />}
      {agents && (
        <div class="table-wrap">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Scopes</th>
                <th scope="col">Allowlist</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {agents.map((a) => (
                <tr key={a.id}>
                  <td class="nowrap">
                    <a href={`/agents/${a.id}`}>{a.name}</a>
                  </td>
                  <td>
                    <span class={`actor actor-${a.kind}`}>
                      <span class="actor-kind">{a.kind === 'human' ? 'Human' : 'Agent'}</span>
                    </span>
                    {a.role && (
                      <span class="small muted" data-testid="principal-role">
                        {' '}
                        {a.role}
                      </span>
                    )}
                  </td>
                  <td class="small">{a.scopes.join(', ')}</td>
                  <td class="small">{a.tool_allowlist === null ? 'any' : `${a.tool_allowlist.length} operations`}</td>
                  <td>{a.disabled ? <span class="status status-cancelled">Disabled</span> : 'Active'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {more && (
            <p>
              <button type="button" disabled={reading} onClick={() => load(more)}>
                Show {PAGE} more
              </button>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
