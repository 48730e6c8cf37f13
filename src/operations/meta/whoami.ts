import { z } from 'zod';
import { PRINCIPAL_KINDS, SCOPES } from '../../domain/scopes.ts';
import { countActiveLeases } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';

export const whoami = defineOperation({
  name: 'whoami',
  summary: 'Who you are: your principal, token, scopes and allowlist. The first call of the resume sequence.',
  kind: 'read',
  scope: null,
  approval: 'none',
  http: { method: 'GET', path: '/whoami' },
  input: z.strictObject({}),
  output: z.object({
      principal: z.object({ id: z.string(), kind: z.enum(PRINCIPAL_KINDS), name: z.string() }),
      token: z.object({ id: z.string(), machine: z.string() }),
      scopes: z.array(z.enum(SCOPES)),
      tool_allowlist: z.array(z.string()).nullable().describe('null: every operation your scopes allow.'),
      open_leases: z.int().describe('Leases you hold right now: list them with GET /api/v1/leases?holder=me&state=active.'),
    }),
  async run(db, ctx) {
    const actor = ctx.actor;
    const openLeases = await countActiveLeases(db, actor.id, ctx.now);
    return {
      principal: { id: actor.id, kind: actor.kind, name: actor.name },
      token: { id: actor.tokenId, machine: actor.machine },
      scopes: SCOPES.filter((s) => actor.scopes.has(s)),
      tool_allowlist: actor.toolAllowlist ? [...actor.toolAllowlist].sort() : null,
      open_leases: openLeases,
    };
  },
});
