import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { SCOPES, SYSTEM_ACTOR } from '../domain/scopes.ts';
import type { Ids } from '../ids.ts';
import { countAgents, insertAgent } from '../store/agents.ts';
import { appendEvents } from '../store/events.ts';
import type { DB } from '../store/schema.ts';
import { insertToken } from '../store/tokens.ts';
import { generateToken, hashToken, tokenPrefix } from '../tokens.ts';
import type { Tx } from '../store/connection.ts';

/**
 * On an empty database, creates the first human admin (every scope) and a token for it, by the
 * system actor with events. Returns the token to print once; undefined when principals already
 * exist. Instances starting together serialize on an advisory lock, so only one admin is made.
 */
export async function bootstrapAdmin(db: Kysely<DB>, deps: { clock: Clock; ids: Ids; token: string | undefined }): Promise<string | undefined> {
  return db.transaction().execute(async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(3, 1)`.execute(tx);
    if ((await countAgents(tx)) > 0) return undefined;
    const now = deps.clock.now();
    const token = deps.token ?? generateToken();
    const agentId = deps.ids.make('agt');
    const by = { created_at: now, created_by_id: SYSTEM_ACTOR.id, created_by_kind: SYSTEM_ACTOR.kind };
    await insertAgent(tx, { id: agentId, name: 'admin', kind: 'human', scopes: [...SCOPES], tool_allowlist: null, role: 'owner', ...by });
    await appendEvents(tx, [
      { id: deps.ids.make('evt'), type: 'agent.created', subject: agentId, data: { name: 'admin', kind: 'human', scopes: SCOPES, bootstrap: true }, ...systemProvenance(now) },
    ]);
    await issueAdminToken(tx, { ids: deps.ids, now, agentId, token, machine: 'bootstrap', data: {} });
    return token;
  });
}

/** Provenance of an event the server itself writes (no token, no request). */
export function systemProvenance(now: Date) {
  return { actor_id: SYSTEM_ACTOR.id, actor_kind: SYSTEM_ACTOR.kind, token_id: null, machine: null, idempotency_key: null, created_at: now };
}

/** Inserts a token with every scope for `agentId`, by the system actor, and its `token.created` event (plus `data`). */
export async function issueAdminToken(
  tx: Tx,
  a: { ids: Ids; now: Date; agentId: string; token: string; machine: string; data: Record<string, unknown> },
): Promise<string> {
  const tokenId = a.ids.make('tok');
  await insertToken(tx, {
    id: tokenId,
    agent_id: a.agentId,
    machine: a.machine,
    token_hash: hashToken(a.token),
    token_prefix: tokenPrefix(a.token),
    scopes: [...SCOPES],
    expires_at: null,
    created_at: a.now,
    created_by_id: SYSTEM_ACTOR.id,
    created_by_kind: SYSTEM_ACTOR.kind,
  });
  await appendEvents(tx, [
    { id: a.ids.make('evt'), type: 'token.created', subject: tokenId, data: { agent_id: a.agentId, machine: a.machine, scopes: SCOPES, ...a.data }, ...systemProvenance(a.now) },
  ]);
  return tokenId;
}
