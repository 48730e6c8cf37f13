import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Principal } from '../domain/principal.ts';
import { ROLE_SCOPES, type Role } from '../domain/roles.ts';
import { SCOPES } from '../domain/scopes.ts';
import { BatonError } from '../errors.ts';
import type { Ids } from '../ids.ts';
import { principalFromGrant } from '../operations/shared/grants.ts';
import { findAgent, insertAgent, updateAgent } from '../store/agents.ts';
import { appendEvents, type NewEventRow } from '../store/events.ts';
import type { Tx } from '../store/connection.ts';
import type { DB } from '../store/schema.ts';
import { bindWorkspace, DEFAULT_WORKSPACE_ID, inWorkspace } from '../store/workspace-scope.ts';
import { endSession, findIdentities, findIdentityOf, findInvitedHumans, findProviderSessions, findSessionBySecretHash, findSessionByToken, insertIdentity, insertSession, touchIdentity, touchSession } from '../store/sessions.ts';
import { findGrantAndCount, insertToken, type RateCharge } from '../store/tokens.ts';
import { type Count, grantCount } from './authenticate.ts';
import { systemProvenance } from './bootstrap.ts';

/** The cookie secret's form: not a `bat_` token, so it is refused as a bearer without a lookup. */
const SECRET = /^bses_[A-Za-z0-9_-]{43}$/;

/** What a verified ID token says about the person signing in. */
export interface VerifiedIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly name: string;
  readonly email: string | null;
  /** The provider says the email is the person's (`email_verified`): only then does it link invitations. */
  readonly emailVerified: boolean;
  /** The values of the configured role claim (BATON_OIDC_ROLE_CLAIM). */
  readonly roleValues: readonly string[];
  /** The provider's session id (the ID token's `sid`), when it sent one: what its back-channel logout names. */
  readonly providerSessionId?: string | null;
}

/** A provider's verified back-channel logout token: who signed out there, and when it said so. */
export interface ProviderLogout {
  readonly issuer: string;
  readonly subject: string | null;
  readonly providerSessionId: string | null;
  /** The token's `iat`: sessions opened later are not ended. */
  readonly issuedAt: Date;
}

export interface SignedIn {
  /** The cookie's value; shown once, stored only as its SHA-256. */
  readonly secret: string;
  readonly sessionId: string;
  readonly agentId: string;
  readonly workspaceId: string;
}

export interface SessionDeps {
  readonly db: Kysely<DB>;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly config: Config;
}

/**
 * Opens a session for a person the provider vouched for, in one transaction, in one of their
 * workspaces: `workspaceId` when they are a member of it, else the one they last signed in to. A
 * person is a member of each workspace holding a human linked to their issuer+subject; a human an
 * admin added with the person's verified email is linked at this sign-in (the invitation). The
 * first sign-in of a person in no workspace makes their human in the default workspace (role from
 * the claim map, else the default). A disabled person is refused. Writes `agent.created` (by the
 * system) and `session.signed_in` (by the person, through the new session's token).
 */
export async function signIn(deps: SessionDeps, who: VerifiedIdentity, userAgent: string, workspaceId?: string): Promise<SignedIn> {
  return deps.db.transaction().execute((tx) => openSession(tx, deps, who, userAgent, workspaceId));
}

/** `signIn` in the caller's transaction; `switchedFrom`, the session it replaces, goes on `session.signed_in`. */
async function openSession(tx: Tx, deps: SessionDeps, who: VerifiedIdentity, userAgent: string, workspaceId: string | undefined, switchedFrom?: string): Promise<SignedIn> {
  const { oidc, session } = deps.config;
  const now = deps.clock.now();
  const events: NewEventRow[] = [];
  if (who.email !== null && who.emailVerified) await linkInvitations(tx, who, now);
  const memberships = await findIdentities(tx, who.issuer, who.subject);
  const chosen = memberships.find((m) => m.workspace_id === workspaceId) ?? memberships[0];
  if (workspaceId !== undefined && chosen?.workspace_id !== workspaceId) {
    throw new BatonError('workspace_not_found', `You are not a member of workspace ${workspaceId}.`, { hint: 'List your workspaces with workspaces_list (`baton workspaces list`).' });
  }
  // From here the transaction is the chosen workspace's: what it writes lands there, and it sees nothing else.
  await bindWorkspace(tx, chosen?.workspace_id ?? DEFAULT_WORKSPACE_ID);
  let agent = chosen ? await findAgent(tx, chosen.agent_id) : undefined;
  if (!agent) {
    const role = roleFor(who.roleValues, oidc?.roleMap ?? [], oidc?.defaultRole ?? 'member');
    const by = { created_at: now, created_by_id: 'system', created_by_kind: 'system' };
    agent = await insertAgent(tx, { id: deps.ids.make('agt'), name: who.name, kind: 'human', scopes: [...ROLE_SCOPES[role]], tool_allowlist: null, email: who.email, role, ...by });
    await insertIdentity(tx, { issuer: who.issuer, subject: who.subject, workspace_id: DEFAULT_WORKSPACE_ID, agent_id: agent.id, email: who.email, created_at: now, last_sign_in_at: now });
    events.push({ id: deps.ids.make('evt'), type: 'agent.created', subject: agent.id, data: { name: who.name, kind: 'human', role, scopes: ROLE_SCOPES[role], via: 'oidc', issuer: who.issuer }, ...systemProvenance(now) });
  } else {
    if (agent.disabled) throw new BatonError('sign_in_failed', `${agent.name} (${agent.id}) is disabled on this server; an admin can enable them.`, { extra: { reason: 'disabled' } });
    await touchIdentity(tx, who.issuer, who.subject, agent.workspace_id, who.email, now);
    if (who.email !== null && who.email !== agent.email) await updateAgent(tx, agent.id, { email: who.email, updated_at: now, updated_by_id: 'system', updated_by_kind: 'system' });
  }
  const secret = `bses_${randomBytes(32).toString('base64url')}`;
  const sessionId = deps.ids.make('ses');
  const tokenId = deps.ids.make('tok');
  const machine = `session:${sessionId}`;
  const expiresAt = new Date(now.getTime() + session.absoluteS * 1000);
  // Every scope on the token: the person's scopes (their role's) govern, and a role change applies at the next request.
  await insertToken(tx, {
    id: tokenId, agent_id: agent.id, machine, token_hash: secretHash(secret), token_prefix: 'session', scopes: [...SCOPES],
    expires_at: expiresAt, created_at: now, created_by_id: agent.id, created_by_kind: 'human',
  });
  await insertSession(tx, { id: sessionId, workspace_id: agent.workspace_id, token_id: tokenId, agent_id: agent.id, user_agent: userAgent.slice(0, 500), issuer: who.issuer, provider_session_id: who.providerSessionId ?? null, created_at: now, last_seen_at: now, expires_at: expiresAt });
  events.push({
    id: deps.ids.make('evt'), type: 'session.signed_in', subject: sessionId, data: { agent_id: agent.id, issuer: who.issuer, role: agent.role, workspace_id: agent.workspace_id, expires_at: expiresAt.toISOString(), ...(switchedFrom ? { switched_from: switchedFrom } : {}) },
    actor_id: agent.id, actor_kind: 'human', token_id: tokenId, machine, idempotency_key: null, created_at: now,
  });
  await appendEvents(tx, events);
  return { secret, sessionId, agentId: agent.id, workspaceId: agent.workspace_id };
}

/**
 * Links the person to every human an admin added with their (verified) email in a workspace they
 * are not yet a member of, and that no other person holds: how a person is invited to a workspace.
 */
async function linkInvitations(tx: Tx, who: VerifiedIdentity, now: Date): Promise<void> {
  for (const invited of await findInvitedHumans(tx, who.issuer, who.subject, who.email ?? '')) {
    await insertIdentity(tx, { issuer: who.issuer, subject: who.subject, workspace_id: invited.workspace_id, agent_id: invited.id, email: who.email, created_at: now, last_sign_in_at: new Date(0) });
  }
}

/**
 * Moves a signed-in person to another of their workspaces: their session there starts (a new
 * cookie) and this one ends (`switched`), in one transaction. Refused (404 `workspace_not_found`) for a workspace they
 * are not a member of, or a session that is not a sign-in through the provider; 401 `invalid_token` for a session that
 * ended or passed its idle or absolute timeout.
 */
export async function switchWorkspace(deps: SessionDeps, secret: string, workspaceId: string, userAgent: string): Promise<SignedIn> {
  const current = SECRET.test(secret) ? await findSessionBySecretHash(deps.db, secretHash(secret)) : undefined;
  if (!current || current.ended_at) throw new BatonError('invalid_token', 'No such session; sign in again.');
  // A switch opens a fresh session, so one past its timeouts must not make one: that would renew a cookie for ever.
  const now = deps.clock.now();
  if (current.expires_at <= now || idledOut(current, deps.config, now)) {
    throw new BatonError('invalid_token', `Session ${current.id} timed out; sign in again.`);
  }
  const identity = await findIdentityOf(deps.db, current.agent_id);
  const agent = identity ? await findAgent(deps.db, current.agent_id) : undefined;
  if (!identity || !agent) throw new BatonError('workspace_not_found', `This session is not a single sign-on session, so it has only workspace ${current.workspace_id}.`);
  // The new session belongs to the same sign-in at the provider: a logout there ends it too.
  const who: VerifiedIdentity = { issuer: identity.issuer, subject: identity.subject, name: agent.name, email: identity.email, emailVerified: false, roleValues: [], providerSessionId: current.provider_session_id };
  // One transaction: the old session ends (`switched`, on its row; unbound, as it is another
  // workspace's) exactly when the new one opens, whose `session.signed_in` names it. A transaction
  // appends events in one workspace only, so the old one's timeline gets no event of its own.
  return deps.db.transaction().execute(async (tx) => {
    if (!(await endSession(tx, current.id, 'switched', deps.clock.now()))) throw new BatonError('invalid_token', `Session ${current.id} ended meanwhile; sign in again.`);
    return openSession(tx, deps, who, userAgent, workspaceId, current.id);
  });
}

/** The first role whose claim value the person carries, in the map's order; else the default. */
export function roleFor(values: readonly string[], map: readonly (readonly [string, Role])[], fallback: Role): Role {
  return map.find(([value]) => values.includes(value))?.[1] ?? fallback;
}

/**
 * The principal a session cookie stands for, counted against its token's rate window like a
 * bearer token. Refused (401 `invalid_token`) once the session was signed out or revoked, passed
 * its absolute timeout (its token's expiry) or its idle timeout, or its person was disabled —
 * checked on every request, so a change applies at the next one.
 */
export async function authenticateSession(deps: SessionDeps, secret: string, charge: RateCharge): Promise<{ principal: Principal; count: Count }> {
  if (!SECRET.test(secret)) throw new BatonError('invalid_token', 'The session cookie is not a Baton session; sign in again.');
  const now = deps.clock.now();
  const grant = await findGrantAndCount(deps.db, secretHash(secret), charge, now);
  const session = grant ? await findSessionByToken(deps.db, grant.token_id) : undefined;
  if (!grant || !session) throw new BatonError('invalid_token', 'No such session; sign in again.');
  if (session.ended_at) throw new BatonError('invalid_token', `Session ${session.id} ended (${session.end_reason ?? 'ended'}); sign in again.`);
  const principal = principalFromGrant(grant, now);
  if (idledOut(session, deps.config, now)) {
    await deps.db.transaction().execute((tx) => endSession(tx, session.id, 'idle', now));
    throw new BatonError('invalid_token', `Session ${session.id} was idle for ${deps.config.session.idleS} s; sign in again.`);
  }
  await touchSession(deps.db, session.id, now);
  return { principal: { ...principal, sessionId: session.id }, count: grantCount(grant, charge.operations) };
}

/** Ends the cookie's session on the server (`session.signed_out`, by its person); a session already over is left as it is. */
export async function signOut(deps: SessionDeps, secret: string): Promise<void> {
  if (!SECRET.test(secret)) return;
  const session = await findSessionBySecretHash(deps.db, secretHash(secret));
  if (!session) return;
  await inWorkspace(deps.db, session.workspace_id, async (tx) => {
    const now = deps.clock.now();
    const ended = await endSession(tx, session.id, 'signed_out', now);
    if (!ended) return;
    await appendEvents(tx, [
      { id: deps.ids.make('evt'), type: 'session.signed_out', subject: session.id, data: { agent_id: session.agent_id }, actor_id: session.agent_id, actor_kind: 'human', token_id: session.token_id, machine: session.machine, idempotency_key: null, created_at: now },
    ]);
  });
}

/**
 * Ends the sessions a provider's back-channel logout names (`session.signed_out` by the person,
 * `via: provider`, each in its own workspace), in every workspace; answers how many ended. A
 * session opened more than the allowed clock skew after the logout was issued is left alone, so a
 * replayed logout cannot end a later sign-in.
 */
export async function signOutAtProvider(deps: SessionDeps, logout: ProviderLogout): Promise<number> {
  const openedBy = new Date(logout.issuedAt.getTime() + PROVIDER_CLOCK_SKEW_S * 1000);
  const sessions = await findProviderSessions(deps.db, { issuer: logout.issuer, subject: logout.subject, providerSessionId: logout.providerSessionId, openedBy });
  let ended = 0;
  for (const session of sessions) {
    await inWorkspace(deps.db, session.workspace_id, async (tx) => {
      const now = deps.clock.now();
      if (!(await endSession(tx, session.id, 'signed_out', now))) return;
      ended += 1;
      await appendEvents(tx, [
        { id: deps.ids.make('evt'), type: 'session.signed_out', subject: session.id, data: { agent_id: session.agent_id, via: 'provider' }, actor_id: session.agent_id, actor_kind: 'human', token_id: session.token_id, machine: session.machine, idempotency_key: null, created_at: now },
      ]);
    });
  }
  return ended;
}

/** How far a provider's clock may be from this server's, in seconds, for the times in its tokens. */
export const PROVIDER_CLOCK_SKEW_S = 60;

/** The session was last seen an idle timeout ago or more. */
function idledOut(session: { readonly last_seen_at: Date }, config: Config, now: Date): boolean {
  return session.last_seen_at.getTime() + config.session.idleS * 1000 <= now.getTime();
}

function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}
