import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { SCOPES, SYSTEM_ACTOR } from '../domain/scopes.ts';
import type { Ids } from '../ids.ts';
import { insertAgent, listAgents } from '../store/agents.ts';
import { appendEvents } from '../store/events.ts';
import type { DB } from '../store/schema.ts';
import { bindWorkspace, DEFAULT_WORKSPACE_ID } from '../store/workspace-scope.ts';
import { generateToken } from '../tokens.ts';
import { issueAdminToken, systemProvenance } from './bootstrap.ts';

/** Enough for any real deployment's humans; the oldest full admin among them gets the token. */
const HUMANS_SCANNED = 1000;

export interface MintedAdminToken {
  readonly token: string;
  readonly tokenId: string;
  readonly agentId: string;
  readonly agentName: string;
}

/**
 * `baton admin-token`, the way back from a lost bootstrap token: a new token with every scope for
 * the default workspace's oldest enabled human holding every scope (a new human `admin` when there is none), written
 * straight to the database by the system actor. Its `token.created` event says `recovery: true`,
 * so the timeline shows who can do this: whoever can reach the database.
 */
export async function mintAdminToken(db: Kysely<DB>, deps: { clock: Clock; ids: Ids }): Promise<MintedAdminToken> {
  return db.transaction().execute(async (tx) => {
    // The same lock as bootstrapping, so a first start and a recovery never both make an admin.
    await sql`SELECT pg_advisory_xact_lock(3, 1)`.execute(tx);
    // Recovery is the default workspace's, as the bootstrap admin is; its owners are found there only.
    await bindWorkspace(tx, DEFAULT_WORKSPACE_ID);
    const now = deps.clock.now();
    const humans = await listAgents(tx, { kind: 'human', beforeId: undefined, limit: HUMANS_SCANNED });
    // metrics:read came after the first admins were made, and agents:admin admits /metrics anyway.
    let admin = humans.filter((h) => !h.disabled && SCOPES.every((s) => s === 'metrics:read' || h.scopes.includes(s))).at(-1);
    if (!admin) {
      const by = { created_at: now, created_by_id: SYSTEM_ACTOR.id, created_by_kind: SYSTEM_ACTOR.kind };
      admin = await insertAgent(tx, { id: deps.ids.make('agt'), name: 'admin', kind: 'human', scopes: [...SCOPES], tool_allowlist: null, role: 'owner', ...by });
      await appendEvents(tx, [{ id: deps.ids.make('evt'), type: 'agent.created', subject: admin.id, data: { name: 'admin', kind: 'human', scopes: SCOPES, recovery: true }, ...systemProvenance(now) }]);
    }
    const token = generateToken();
    // Machine labels are unique per principal: the time makes each recovery's label its own.
    const machine = `admin-token-${now.toISOString().replace(/[^0-9]/g, '').slice(0, 17)}`;
    const tokenId = await issueAdminToken(tx, { ids: deps.ids, now, agentId: admin.id, token, machine, data: { recovery: true, via: 'baton admin-token' } });
    return { token, tokenId, agentId: admin.id, agentName: admin.name };
  });
}
