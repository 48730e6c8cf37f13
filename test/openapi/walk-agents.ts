import { UNKNOWN, type Walker } from './walk.ts';

interface AgentBody {
  id: string;
  version: number;
}

interface PageBody {
  next_cursor: string | null;
}

/** agents.* and tokens.*: principals and their tokens. */
export async function walkAgents(w: Walker): Promise<void> {
  const { call, present, who } = w;
  const agentAdmin = who.agentAdmin.token;

  const bot = (await call('POST', '/api/v1/agents', { body: { name: 'walker-bot', scopes: ['tasks:read', 'tasks:claim'] } }, 201)).json<AgentBody>();
  await call('POST', '/api/v1/agents', { body: { name: 'walker-human', kind: 'human', scopes: ['tasks:read'], tool_allowlist: ['whoami'], rate_limit: 100 } }, 201);
  await call('POST', '/api/v1/agents', { body: { name: 'typo', scopes: [], tool_allowlist: ['tasks.clam'] } }, 400);
  await call('POST', '/api/v1/agents', { body: { name: 'bad scope', scopes: ['tasks:everything'] } }, 400);
  await call('POST', '/api/v1/agents', { body: { name: 'x', scopes: [] }, token: agentAdmin }, 403);
  await call('POST', '/api/v1/agents', { body: { name: 'x', scopes: [] }, token: who.reader.token }, 403);

  // A human invited by email with a role; an agent has neither.
  await call('POST', '/api/v1/agents', { body: { name: 'walker-invitee', kind: 'human', email: 'invitee@example.com', role: 'member' } }, 201);
  await call('POST', '/api/v1/agents', { body: { name: 'walker-bot-role', role: 'member' } }, 400);
  await call('POST', '/api/v1/agents', { body: { name: 'no scopes' } }, 400);

  // Workspaces: the bootstrap owner makes one and gets its owner's token; names are unique.
  const other = (await call('POST', '/api/v1/workspaces', { body: { name: 'walker-workspace' } }, 201)).json<{ token: string }>();
  await call('POST', '/api/v1/workspaces', { body: { name: 'walker-workspace' } }, 409);
  await call('POST', '/api/v1/workspaces', { body: { name: '' } }, 400);
  await call('POST', '/api/v1/workspaces', { body: { name: 'not mine' }, token: who.reader.token }, 403);
  await call('GET', '/api/v1/workspaces', {}, 200);
  await call('GET', '/api/v1/workspaces', { token: other.token }, 200);
  await call('GET', `/api/v1/agents/${bot.id}`, { token: other.token }, 404);
  await call('GET', '/api/v1/workspaces/current', { token: other.token }, 200);
  await call('PATCH', '/api/v1/workspaces/current', { body: { escalate_review_s: 3600, chat_webhook_url: 'https://chat.example/hooks/walker' }, token: other.token }, 200);
  await call('PATCH', '/api/v1/workspaces/current', { body: { rate_limit: 0 }, token: other.token }, 400);
  await call('PATCH', '/api/v1/workspaces/current', { body: { escalate_review_s: 60 }, token: who.reader.token }, 403);

  const page = (await call('GET', '/api/v1/agents?limit=2', {}, 200)).json<PageBody>();
  await call('GET', `/api/v1/agents?limit=2&cursor=${encodeURIComponent(present(page.next_cursor, 'agents next_cursor'))}`, {}, 200);
  await call('GET', '/api/v1/agents?kind=human', {}, 200);
  await call('GET', '/api/v1/agents', { token: agentAdmin }, 200);
  await call('GET', '/api/v1/agents?kind=robot', {}, 400);
  await call('GET', '/api/v1/agents', { token: who.reader.token }, 403);
  // The directory: names for any reader of tasks, paged, by ids.
  const names = (await call('GET', '/api/v1/directory?limit=2', { token: who.reader.token }, 200)).json<PageBody>();
  await call('GET', `/api/v1/directory?limit=2&cursor=${encodeURIComponent(present(names.next_cursor, 'directory next_cursor'))}`, { token: who.reader.token }, 200);
  await call('GET', `/api/v1/directory?ids=${bot.id}&kind=agent`, { token: agentAdmin }, 200);
  await call('GET', '/api/v1/directory?ids=tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV', {}, 400);

  const read = await call('GET', `/api/v1/agents/${bot.id}`, {}, 200);
  await call('GET', `/api/v1/agents/${bot.id}`, { headers: { 'if-none-match': String(read.headers.etag) } }, 304);
  await call('GET', `/api/v1/agents/${who.agentAdmin.id}`, { token: agentAdmin }, 200);
  await call('GET', `/api/v1/agents/${bot.id}`, { token: agentAdmin }, 404);
  await call('GET', `/api/v1/agents/${UNKNOWN.agent}`, {}, 404);
  await call('GET', '/api/v1/agents/not-an-agent', {}, 400);

  await call('PATCH', `/api/v1/agents/${bot.id}`, { body: { name: 'walker-bot-2', rate_limit: 50 }, ifMatch: `"${bot.version}"` }, 200);
  await call('PATCH', `/api/v1/agents/${bot.id}`, { body: { name: 'stale' }, ifMatch: `"${bot.version}"` }, 409);
  await call('PATCH', `/api/v1/agents/${bot.id}`, { body: {} }, 400);
  await call('PATCH', `/api/v1/agents/${bot.id}`, { body: { disabled: true }, token: agentAdmin }, 403);
  await call('PATCH', `/api/v1/agents/${UNKNOWN.agent}`, { body: { disabled: true } }, 404);

  const token = (await call('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'laptop-1', expires_in_s: 3600 } }, 201)).json<{ id: string; token: string }>();
  await call('GET', '/api/v1/whoami', { token: token.token }, 200);
  await call('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'laptop-1' } }, 409);
  await call('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'laptop-2', scopes: ['agents:admin'] } }, 400);
  await call('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'bad machine!' } }, 400);
  await call('POST', `/api/v1/agents/${UNKNOWN.agent}/tokens`, { body: { machine: 'laptop-1' } }, 404);
  await call('POST', `/api/v1/agents/${who.agentAdmin.id}/tokens`, { body: { machine: 'own-box' }, token: agentAdmin }, 201);
  await call('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'theirs' }, token: agentAdmin }, 404);

  await call('GET', `/api/v1/agents/${bot.id}/tokens`, {}, 200);
  await call('GET', `/api/v1/agents/${bot.id}/tokens?limit=0`, {}, 400);
  await call('GET', `/api/v1/agents/${bot.id}/tokens`, { token: agentAdmin }, 404);
  await call('GET', `/api/v1/agents/${UNKNOWN.agent}/tokens`, {}, 404);

  const rotated = (await call('POST', `/api/v1/tokens/${token.id}/rotate`, { body: { grace_s: 60 } }, 201)).json<{ id: string }>();
  await call('POST', `/api/v1/tokens/${token.id}/rotate`, { body: {} }, 409);
  await call('POST', `/api/v1/tokens/${UNKNOWN.token}/rotate`, { body: {} }, 404);
  await call('POST', `/api/v1/tokens/${rotated.id}/rotate`, { body: { grace_s: -1 } }, 400);
  await call('DELETE', `/api/v1/tokens/${token.id}`, {}, 200);
  await call('DELETE', `/api/v1/tokens/${token.id}`, {}, 200);

  // A person who signed in with single sign-on: their role and sessions (spec/identity.md).
  const person = await w.t.server.service.signIn({ issuer: 'https://idp.example', subject: 'walker-person', name: 'Walker Person', email: null, emailVerified: false, roleValues: [] }, 'walker');
  await call('POST', `/api/v1/agents/${person.agentId}/role`, { body: { role: 'viewer' } }, 200);
  await call('POST', `/api/v1/agents/${bot.id}/role`, { body: { role: 'viewer' } }, 409);
  await call('POST', `/api/v1/agents/${person.agentId}/role`, { body: { role: 'boss' } }, 400);
  await call('GET', `/api/v1/sessions?agent_id=${person.agentId}`, {}, 200);
  await call('GET', '/api/v1/sessions', {}, 200);
  await call('DELETE', `/api/v1/sessions/${person.sessionId}`, {}, 200);
  await call('DELETE', '/api/v1/sessions/ses_01JZZZZZZZZZZZZZZZZZZZZZZZ', {}, 404);
  await call('DELETE', `/api/v1/tokens/${UNKNOWN.token}`, {}, 404);
  await call('DELETE', '/api/v1/tokens/not-a-token', {}, 400);
  await call('DELETE', `/api/v1/tokens/${token.id}`, { token: who.reader.token }, 403);
}
