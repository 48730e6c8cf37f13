import { z } from 'zod';
import { PRINCIPAL_KINDS, SCOPES } from '../../domain/scopes.ts';
import { TASK_STATUSES, type TaskStatus } from '../../domain/task-status.ts';
import { countActiveLeases } from '../../store/leases.ts';
import { countAssigned } from '../../store/tasks.ts';
import { mayInvoke } from '../authorization.ts';
import { defineOperation, OPERATIONS_MAX } from '../define-operation.ts';
import { statusCounts } from '../tasks/task-schema.ts';

export const whoami = defineOperation({
  name: 'whoami',
  summary: 'Who you are: your principal, token, scopes and allowlist. The first call of the resume sequence.',
  kind: 'read',
  scope: null,
  approval: 'none',
  toolset: 'work',
  http: { method: 'GET', path: '/whoami' },
  input: z.strictObject({}),
  output: z.object({
      principal: z.object({ id: z.string(), kind: z.enum(PRINCIPAL_KINDS), name: z.string() }),
      token: z.object({ id: z.string(), machine: z.string() }),
      scopes: z.array(z.enum(SCOPES)).max(SCOPES.length),
      tool_allowlist: z.array(z.string()).max(100).nullable().describe('null: every operation your scopes allow.'),
      open_leases: z.int().describe('Leases you hold right now: list them with GET /api/v1/leases?holder=me&state=active.'),
      assigned: statusCounts.describe('How many tasks are assigned to you, by status: list them with GET /api/v1/tasks?assignee=me.'),
      can: z.array(z.string()).max(OPERATIONS_MAX).describe('Operations this token may call now (scopes, allowlist, and human-only operations for humans).'),
      needs_approval: z.array(z.string()).max(OPERATIONS_MAX).describe('Of those, the ones that wait for a human\'s approval when you call them.'),
      rate_limit: z
        .object({ limit: z.int(), remaining: z.int(), window_s: z.int(), reset_s: z.int() })
        .nullable()
        .describe('Your token\'s budget after this request.'),
    }),
  async run(db, ctx) {
    const actor = ctx.actor;
    const openLeases = await countActiveLeases(db, actor.id, ctx.now);
    const counts = await countAssigned(db, actor.id);
    const assigned = Object.fromEntries(TASK_STATUSES.map((status) => [status, counts[status] ?? 0])) as Record<TaskStatus, number>;
    const allowed = ctx.operations.filter((op) => mayInvoke(actor, op));
    return {
      principal: { id: actor.id, kind: actor.kind, name: actor.name },
      token: { id: actor.tokenId, machine: actor.machine },
      scopes: SCOPES.filter((s) => actor.scopes.has(s)),
      tool_allowlist: actor.toolAllowlist ? [...actor.toolAllowlist].sort() : null,
      open_leases: openLeases,
      assigned,
      can: allowed.map((op) => op.name),
      needs_approval: allowed.filter((op) => op.approval !== 'none' && !(actor.kind === 'human' && actor.scopes.has('approvals:decide'))).map((op) => op.name),
      rate_limit: ctx.rateBudget
        ? { limit: ctx.rateBudget.limit, remaining: ctx.rateBudget.remaining, window_s: ctx.rateBudget.windowS, reset_s: ctx.rateBudget.resetS }
        : null,
    };
  },
});
