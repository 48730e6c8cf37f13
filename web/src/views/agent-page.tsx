import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { Loading, PageProblem, ProblemNotice } from '../components.tsx';
import { useSession } from '../session.ts';
import type { Agent } from '../types.ts';
import { HeldNow } from './held-now.tsx';
import { PrincipalForm, type PrincipalFields } from './principal-form.tsx';
import { RoleControl } from './role-control.tsx';
import { Tokens } from './tokens.tsx';

/** One principal: what it holds now; a person's role; edit its name, scopes and toolAllowlist (If-Match its version), disable it, manage its tokens. */
export function AgentPage({ id }: { id: string }) {
  const { names } = useSession();
  const [agent, setAgent] = useState<Agent | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  useEffect(() => {
    call('agents_get', { id }).then(setAgent, (error: unknown) => setLoadProblem(problemOf(error)));
  }, [id]);

  const update = async (body: Partial<PrincipalFields & { disabled: boolean }>) => {
    if (!agent) return;
    setSaved(false);
    const failed = await action.send({ operation: 'agents_update', input: { id: agent.id, ...body }, ifMatch: agent.version }, (next) => {
      names.set(next.id, next.name);
      setAgent(next);
      setSaved(true);
    });
    if (failed?.code === 'conflict_version') setAgent(await call('agents_get', { id: agent.id }));
  };
  const setRole = async (role: NonNullable<Agent['role']>) => {
    if (!agent) return;
    setSaved(false);
    const failed = await action.send({ operation: 'agents_set_role', input: { id: agent.id, role }, ifMatch: agent.version }, (next) => {
      setAgent(next);
      setSaved(true);
    });
    if (failed?.code === 'conflict_version') setAgent(await call('agents_get', { id: agent.id }));
  };

  if (!agent) return loadProblem ? <PageProblem problem={loadProblem} /> : <Loading what="the principal" />;
  return (
    <section class="page" aria-labelledby="agent-title">
      <p class="crumbs">
        <a href="/agents">Agents</a> / <code>{agent.id}</code>
      </p>
      <div class="page-head">
        <h1 id="agent-title">
          {agent.name}{' '}
          <span class={`actor actor-${agent.kind}`}>
            <span class="actor-kind">{agent.kind === 'human' ? 'Human' : 'Agent'}</span>
          </span>
        </h1>
        <button type="button" class={agent.disabled ? 'button' : 'button-danger'} disabled={action.busy} onClick={() => void update({ disabled: !agent.disabled })}>
          {agent.disabled ? 'Enable' : 'Disable (stops all its tokens)'}
        </button>
      </div>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {saved && (
        <p class="notice notice-approved" role="status">
          Saved (version {agent.version}).
        </p>
      )}
      <HeldNow id={agent.id} />
      {agent.kind === 'human' && <RoleControl key={agent.version} agent={agent} busy={action.busy} onSet={(role) => void setRole(role)} />}
      <div class="two-col">
        <section class="card">
          <h2>Scopes and allowlist</h2>
          <PrincipalForm key={agent.version} initial={agent} submitLabel="Save changes" busy={action.busy} onSubmit={(f) => void update(f)} />
        </section>
        <Tokens agentId={agent.id} />
      </div>
    </section>
  );
}
