import { z } from 'zod';
import { MEMBER_SCOPES } from '../../domain/scopes.ts';
import { insertExternalHuman, lockAgentByExternalId, updateAgent } from '../../store/agents.ts';
import { revokeAgentTokens } from '../../store/tokens.ts';
import { type Handled, type HandlerContext, type InboundEvent, readObject } from './receive.ts';
import type { Tx } from '../../store/connection.ts';

/** The user object of Clerk-style auth providers (delivered through Svix). */
const providerUser = z.looseObject({
  id: z.string().min(1),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  username: z.string().nullish(),
  primary_email_address_id: z.string().nullish(),
  email_addresses: z.array(z.looseObject({ id: z.string(), email_address: z.string() })).nullish(),
  updated_at: z.number().nullish(),
});
type ProviderUser = z.infer<typeof providerUser>;

const providerSession = z.looseObject({ id: z.string(), user_id: z.string().nullish(), status: z.string().nullish() });

const SYSTEM = { updated_by_id: 'system', updated_by_kind: 'system' } as const;

/**
 * `user.created|updated` create or update the human principal for the provider's user id;
 * `user.deleted` disables it and revokes its tokens; `session.*` and unknown types are recorded only.
 */
export async function handleAuthEvent(tx: Tx, event: InboundEvent, ctx: HandlerContext): Promise<Handled> {
  if (event.type === 'user.created' || event.type === 'user.updated') return upsertHuman(tx, event, ctx);
  if (event.type === 'user.deleted') return deleteHuman(tx, event, ctx);
  if (event.type.startsWith('session.')) {
    const session = readObject(providerSession, event);
    const human = session.user_id ? await lockAgentByExternalId(tx, session.user_id) : undefined;
    return {
      type: 'auth.session_recorded',
      subject: human?.id ?? session.user_id ?? session.id,
      data: { session_id: session.id, external_id: session.user_id ?? null, status: session.status ?? null },
    };
  }
  return { type: 'auth.received', subject: event.id, data: { handled: false } };
}

/**
 * The human for the provider's user: inserted by the first delivery that finds none (a concurrent
 * one waits on the unique key, then updates instead), updated by the others. A delivery older than
 * what was applied (by `changedAt`) is recorded, not applied: the principal ends in the newest state.
 */
async function upsertHuman(tx: Tx, event: InboundEvent, ctx: HandlerContext): Promise<Handled> {
  const user = readObject(providerUser, event);
  const at = changedAt(user, event);
  const name = displayName(user);
  const email = primaryEmail(user);
  const created = await insertExternalHuman(tx, newHuman(user.id, { name, email, at, disabled: false }, ctx));
  if (created) return { type: 'auth.user_created', subject: created.id, data: { external_id: user.id, name, email, scopes: created.scopes } };
  const existing = await lockAgentByExternalId(tx, user.id);
  if (!existing) throw new Error(`the human for ${user.id} vanished between insert and lock`);
  if (isStale(existing.external_updated_at, at)) {
    return { type: 'auth.user_updated', subject: existing.id, data: { external_id: user.id, applied: false, reason: 'older than the last applied change' } };
  }
  await updateAgent(tx, existing.id, { name, email, external_updated_at: at, updated_at: ctx.now, ...SYSTEM });
  return { type: 'auth.user_updated', subject: existing.id, data: { external_id: user.id, name, email } };
}

/**
 * Disables the human and revokes its tokens. A deletion that arrives before the user's creation
 * leaves a disabled principal behind, so the late creation cannot bring the user back.
 */
async function deleteHuman(tx: Tx, event: InboundEvent, ctx: HandlerContext): Promise<Handled> {
  const { id } = readObject(z.looseObject({ id: z.string().min(1) }), event);
  const at = event.sentAt;
  const tombstone = await insertExternalHuman(tx, newHuman(id, { name: id.slice(0, 100), email: null, at, disabled: true }, ctx));
  if (tombstone) return { type: 'auth.user_deleted', subject: tombstone.id, data: { external_id: id, known: false } };
  const human = await lockAgentByExternalId(tx, id);
  if (!human) throw new Error(`the human for ${id} vanished between insert and lock`);
  const latest = isStale(human.external_updated_at, at) ? human.external_updated_at : at;
  await updateAgent(tx, human.id, { disabled: true, external_updated_at: latest, updated_at: ctx.now, ...SYSTEM });
  const revoked = await revokeAgentTokens(tx, human.id, ctx.now);
  return { type: 'auth.user_deleted', subject: human.id, data: { external_id: id, known: true, revoked_tokens: revoked } };
}

function newHuman(externalId: string, state: { name: string; email: string | null; at: Date; disabled: boolean }, ctx: HandlerContext) {
  return {
    id: ctx.ids.make('agt'),
    name: state.name,
    kind: 'human' as const,
    scopes: [...MEMBER_SCOPES],
    role: 'member' as const,
    tool_allowlist: null,
    external_id: externalId,
    external_updated_at: state.at,
    disabled: state.disabled,
    email: state.email,
    created_at: ctx.now,
    created_by_id: 'system',
    created_by_kind: 'system',
  };
}

/** When the provider changed the user: its `updated_at` (epoch ms, as Clerk sends it), else when the delivery was signed. */
function changedAt(user: ProviderUser, event: InboundEvent): Date {
  return user.updated_at == null ? event.sentAt : new Date(user.updated_at);
}

/** Whether a change made at `at` is older than the one already applied. Equal times apply (the later delivery wins). */
function isStale(applied: Date | null, at: Date): boolean {
  return applied !== null && applied.getTime() > at.getTime();
}

function primaryEmail(user: ProviderUser): string | null {
  const emails = user.email_addresses ?? [];
  return (emails.find((e) => e.id === user.primary_email_address_id) ?? emails[0])?.email_address ?? null;
}

/** A principal name (1–100 characters): the person's name, else username, else email, else the provider id. */
function displayName(user: ProviderUser): string {
  const full = [user.first_name, user.last_name].filter(Boolean).join(' ').trim();
  return (full || user.username || primaryEmail(user) || user.id).slice(0, 100);
}
