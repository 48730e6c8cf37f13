import { type Kysely, type Selectable, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB, OidcIdentitiesTable, SessionsTable } from './schema.ts';

export type SessionRow = Selectable<SessionsTable>;
export type OidcIdentityRow = Selectable<OidcIdentitiesTable>;
type EndReason = NonNullable<SessionRow['end_reason']>;

/** A person's memberships (one identity row per workspace), the one signed in to last first; locked until the transaction ends. */
export async function findIdentities(tx: Tx, issuer: string, subject: string): Promise<OidcIdentityRow[]> {
  return tx.selectFrom('oidc_identities').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).orderBy('last_sign_in_at', 'desc').orderBy('workspace_id').forUpdate().execute();
}

/** The identity a principal is linked to, if any (a human who signs in through the provider). */
export async function findIdentityOf(db: Kysely<DB>, agentId: string): Promise<OidcIdentityRow | undefined> {
  return db.selectFrom('oidc_identities').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
}

/**
 * Humans added with this email (case aside), enabled and linked to no person, in workspaces the
 * person is not a member of: the invitations a sign-in with that verified email takes up.
 */
export async function findInvitedHumans(tx: Tx, issuer: string, subject: string, email: string): Promise<{ id: string; workspace_id: string }[]> {
  const { rows } = await sql<{ id: string; workspace_id: string }>`
    SELECT DISTINCT ON (a.workspace_id) a.id, a.workspace_id FROM agents a
    WHERE a.kind = 'human' AND NOT a.disabled AND lower(a.email) = lower(${email})
      AND NOT EXISTS (SELECT 1 FROM oidc_identities i WHERE i.agent_id = a.id)
      AND NOT EXISTS (SELECT 1 FROM oidc_identities i WHERE i.issuer = ${issuer} AND i.subject = ${subject} AND i.workspace_id = a.workspace_id)
    ORDER BY a.workspace_id, a.created_at`.execute(tx);
  return rows;
}

export async function insertIdentity(tx: Tx, row: OidcIdentityRow): Promise<void> {
  await tx.insertInto('oidc_identities').values(row).execute();
}

export async function touchIdentity(tx: Tx, issuer: string, subject: string, workspaceId: string, email: string | null, now: Date): Promise<void> {
  await tx.updateTable('oidc_identities').set({ email, last_sign_in_at: now }).where('issuer', '=', issuer).where('subject', '=', subject).where('workspace_id', '=', workspaceId).execute();
}

export async function insertSession(tx: Tx, row: Omit<SessionRow, 'ended_at' | 'end_reason'>): Promise<void> {
  await tx.insertInto('sessions').values(row).execute();
}

/** The session whose cookie secret has this hash, if any. */
export async function findSessionBySecretHash(db: Kysely<DB>, hash: Uint8Array): Promise<(SessionRow & { machine: string }) | undefined> {
  return db.selectFrom('sessions as s').innerJoin('tokens as t', 't.id', 's.token_id').selectAll('s').select('t.machine').where('t.token_hash', '=', hash).executeTakeFirst();
}

/** The session a token backs, if any. */
export async function findSessionByToken(db: Kysely<DB>, tokenId: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('token_id', '=', tokenId).executeTakeFirst();
}

export async function lockSession(tx: Tx, id: string): Promise<SessionRow | undefined> {
  return tx.selectFrom('sessions').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Records a request on a session, at most once a minute (the idle timeout is counted in minutes),
 * so reads stay cheap.
 */
export async function touchSession(db: Kysely<DB>, id: string, now: Date): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: now })
    .where('id', '=', id)
    .where('last_seen_at', '<', new Date(now.getTime() - 60_000))
    .execute();
}

/**
 * The live sessions a provider's logout names (spec/identity.md, "Signing out at the provider"):
 * those opened in its provider session `sid`, or, naming none, every one of the person `subject`
 * signed in with it; in every workspace, and only those opened by `openedBy` (so a replayed logout
 * does not end a later sign-in).
 */
export async function findProviderSessions(db: Kysely<DB>, q: { issuer: string; subject: string | null; providerSessionId: string | null; openedBy: Date }): Promise<(SessionRow & { machine: string })[]> {
  let select = db
    .selectFrom('sessions as s')
    .innerJoin('tokens as t', 't.id', 's.token_id')
    .selectAll('s')
    .select('t.machine')
    .where('s.issuer', '=', q.issuer)
    .where('s.ended_at', 'is', null)
    .where('s.created_at', '<=', q.openedBy);
  if (q.providerSessionId !== null) select = select.where('s.provider_session_id', '=', q.providerSessionId);
  else if (q.subject !== null) {
    const subject = q.subject;
    select = select.where((eb) => eb.exists(eb.selectFrom('oidc_identities as i').select('i.agent_id').whereRef('i.agent_id', '=', 's.agent_id').where('i.issuer', '=', q.issuer).where('i.subject', '=', subject)));
  } else return [];
  return select.orderBy('s.id').execute();
}

/** Ends a live session and revokes its token; answers the row, or undefined when it had ended. */
export async function endSession(tx: Tx, id: string, reason: EndReason, now: Date): Promise<SessionRow | undefined> {
  const row = await tx.updateTable('sessions').set({ ended_at: now, end_reason: reason }).where('id', '=', id).where('ended_at', 'is', null).returningAll().executeTakeFirst();
  if (row) await tx.updateTable('tokens').set({ revoked_at: now }).where('id', '=', row.token_id).where('revoked_at', 'is', null).execute();
  return row;
}

/** A person's sessions, newest first; `limit + 1` rows for has_more. Live ones only unless `ended`. */
export async function listSessions(db: Kysely<DB>, q: { agentId: string; beforeId: string | undefined; limit: number; now: Date }): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('agent_id', '=', q.agentId)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', q.now)
    .$if(q.beforeId !== undefined, (qb) => qb.where('id', '<', q.beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
}
