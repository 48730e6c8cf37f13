import { z } from 'zod';
import { PRINCIPAL_KINDS, type ActorKind, SCOPES } from '../../domain/scopes.ts';
import { ROLES } from '../../domain/roles.ts';
import { idPattern } from '../../ids.ts';
import type { AgentRow } from '../../store/agents.ts';
import type { TokenRow } from '../../store/tokens.ts';
import { actorRef } from '../tasks/task-schema.ts';

export const agentId = z.string().regex(new RegExp(idPattern('agt')), 'must be an agent id: agt_ followed by a 26-character ULID');
export const tokenId = z.string().regex(new RegExp(idPattern('tok')), 'must be a token id: tok_ followed by a 26-character ULID');
export const scopeList = z.array(z.enum(SCOPES)).max(SCOPES.length).refine((s) => new Set(s).size === s.length, 'scopes must not repeat');
export const agentName = z.string().trim().min(1).max(100);
export const machineLabel = z.string().trim().max(64, 'machine labels are at most 64 characters').regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'machine labels are 1–64 letters, digits and . _ : -');

export const agentOutput = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(PRINCIPAL_KINDS),
  role: z.enum(ROLES).nullable().describe("A human's role; null for agents."),
  scopes: z.array(z.enum(SCOPES)).max(SCOPES.length),
  tool_allowlist: z.array(z.string()).max(100).nullable().describe('Operation names this principal may call; null: any its scopes allow.'),
  disabled: z.boolean(),
  rate_limit: z.int().nullable().describe('Requests per window for each of its tokens; null: the server default.'),
  version: z.int(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  created_by: actorRef,
  updated_by: actorRef,
});

export function toAgent(row: AgentRow) {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    role: row.role,
    scopes: SCOPES.filter((s) => row.scopes.includes(s)),
    tool_allowlist: row.tool_allowlist,
    disabled: row.disabled,
    rate_limit: row.rate_limit,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
    updated_by: { id: row.updated_by_id, kind: row.updated_by_kind as ActorKind },
  };
}

export const tokenOutput = z.object({
  id: z.string(),
  agent_id: z.string(),
  machine: z.string(),
  prefix: z.string().describe('The first characters of the token, to tell tokens apart; the token itself is never shown again.'),
  scopes: z.array(z.enum(SCOPES)).max(SCOPES.length),
  expires_at: z.iso.datetime().nullable(),
  last_used_at: z.iso.datetime().nullable(),
  revoked_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  created_by: actorRef,
});

export function toToken(row: TokenRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    machine: row.machine,
    prefix: row.token_prefix,
    scopes: SCOPES.filter((s) => row.scopes.includes(s)),
    expires_at: row.expires_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
  };
}
