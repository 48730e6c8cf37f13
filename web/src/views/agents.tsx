import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { getAll, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';
import { navigate } from '../router.ts';
import { useSession } from '../session.ts';
import type { Agent } from '../types.ts';
import { PrincipalForm, type PrincipalFields } from './principal-form.tsx';

const NEW_AGENT: PrincipalFields = { name: '', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'], tool_allowlist: null };

/** Every principal (humans and agents), and a form to add one. */
export function Agents() {
  const { names } = useSession();
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [creating, setCreating] = useState(false);
  const [kind, setKind] = useState<'agent' | 'human'>('agent');
  const action = useAction();
  const load = () => {
    setLoadProblem(null);
    getAll('agents_list', {}).then(
      (res) => setAgents(res.data),
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  };
  useEffect(load, []);
  const create = (fields: PrincipalFields) =>
    action.send({ operation: 'agents_create', input: { ...fields, kind } }, (agent) => {
      names.set(agent.id, agent.name);
      navigate(`/agents/${agent.id}`);
    });
  return (
    <section class="page" aria-labelledby="agents-title">
      <div class="page-head">
        <h1 id="agents-title">Agents and humans</h1>
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
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={load} />}
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
        </div>
      )}
    </section>
  );
}
