import { useEffect, useState } from 'preact/hooks';
import { ApiProblem, get, newKey, type Problem, problemOf, write } from '../api.ts';
import { Loading, PageProblem, ProblemNotice } from '../components.tsx';
import { useSession } from '../session.ts';
import type { Agent } from '../types.ts';
import { PrincipalForm, type PrincipalFields } from './principal-form.tsx';
import { Tokens } from './tokens.tsx';

/** One principal: edit its name, scopes and toolAllowlist (If-Match its version), disable it, manage its tokens. */
export function AgentPage({ id }: { id: string }) {
  const { names } = useSession();
  const [agent, setAgent] = useState<Agent | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    get<Agent>(`/agents/${id}`).then(setAgent, (error: unknown) => setProblem(problemOf(error)));
  }, [id]);

  const update = async (body: Partial<PrincipalFields & { disabled: boolean }>) => {
    if (!agent) return;
    setBusy(true);
    setProblem(null);
    setSaved(false);
    try {
      const next = await write<Agent>('PATCH', `/agents/${agent.id}`, { key: newKey(), ifMatch: agent.version, body });
      names.set(next.id, next.name);
      setAgent(next);
      setSaved(true);
    } catch (error) {
      if (!(error instanceof ApiProblem)) throw error;
      setProblem(error.problem);
      if (error.problem.code === 'conflict_version') setAgent(await get<Agent>(`/agents/${agent.id}`));
    } finally {
      setBusy(false);
    }
  };

  if (!agent) return problem ? <PageProblem problem={problem} /> : <Loading what="the principal" />;
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
        <button type="button" class={agent.disabled ? 'button' : 'button-danger'} disabled={busy} onClick={() => void update({ disabled: !agent.disabled })}>
          {agent.disabled ? 'Enable' : 'Disable (stops all its tokens)'}
        </button>
      </div>
      {problem && <ProblemNotice problem={problem} onDismiss={() => setProblem(null)} />}
      {saved && (
        <p class="notice notice-approved" role="status">
          Saved (version {agent.version}).
        </p>
      )}
      <div class="two-col">
        <section class="card">
          <h2>Scopes and allowlist</h2>
          <PrincipalForm key={agent.version} initial={agent} submitLabel="Save changes" busy={busy} onSubmit={(f) => void update(f)} />
        </section>
        <Tokens agentId={agent.id} />
      </div>
    </section>
  );
}
