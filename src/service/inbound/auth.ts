import { z } from 'zod';
import type { Scope } from '../../domain/scopes.ts';
import { insertAgent, lockAgentByExternalId, updateAgent } from '../../store/agents.ts';
import { revokeAgentTokens } from '../../store/tokens.ts';
import { type Handled, type HandlerContext, type InboundEvent, readObject } from './receive.ts';
import type { Tx } from '../../store/connection.ts';

/**
 * What a human announced by the auth provider may do: work on tasks and review them. Deciding
 * approvals and administering agents or webhooks stay with humans an admin grants them to.
 */
const PROVIDER_HUMAN_SCOPES: readonly Scope[] = ['tasks:read', 'tasks:write', 'tasks:claim', 'tasks:review', 'events:read', 'artifacts:write'];

/** The user object of Clerk-style auth providers (delivered through Svix). */
const providerUser = z.looseObject({
  id: z.string().min(1),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  username: z.string().nullish(),
  primary_email_address_id: z.string().nullish(),
  email_addresses: z.array(z.looseObject({ id: z.string(), email_address: z.string() })).nullish(),
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
  if (event.type === 'user.deleted') {
    const { id } = readObject(z.looseObject({ id: z.string().min(1) }), event);
    const human = await lockAgentByExternalId(tx, id);
    if (!human) return { type: 'auth.user_deleted', subject: id, data: { external_id: id, known: false } };
    await updateAgent(tx, human.id, { disabled: true, updated_at: ctx.now, ...SYSTEM });
    const revoked = await revokeAgentTokens(tx, human.id, ctx.now);
    return { type: 'auth.user_deleted', subject: human.id, data: { external_id: id, known: true, revoked_tokens: revoked } };
  }
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

async function upsertHuman(tx: Tx, event: InboundEvent, ctx: HandlerContext): Promise<Handled> {
  const user = readObject(providerUser, event);
  const name = displayName(user);
  const email = primaryEmail(user);
  const existing = await lockAgentByExternalId(tx, user.id);
  if (existing) {
    await updateAgent(tx, existing.id, { name, email, updated_at: ctx.now, ...SYSTEM });
    return { type: 'auth.user_updated', subject: existing.id, data: { external_id: user.id, name, email } };
  }
  const created = await insertAgent(tx, {
    id: ctx.ids.make('agt'),
    name,
    kind: 'human',
    scopes: [...PROVIDER_HUMAN_SCOPES],
    tool_allowlist: null,
    external_id: user.id,
    email,
    created_at: ctx.now,
    created_by_id: 'system',
    created_by_kind: 'system',
  });
  return { type: 'auth.user_created', subject: created.id, data: { external_id: user.id, name, email, scopes: created.scopes } };
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
