import { z } from 'zod';
import { findLease } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';
import { leaseNotFound } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';

export const getLease = defineOperation({
  name: 'leases_get',
  summary: 'Read one lease: holder, state, epoch and expiry.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/leases/{id}' },
  input: z.strictObject({ id: leaseId }),
  output: leaseOutput,
  async run(db, ctx, input) {
    const lease = await findLease(db, input.id);
    // Another agent's lease is not yours to see: answered as absent, so ids cannot be probed.
    if (!lease || (ctx.actor.kind !== 'human' && lease.holder_id !== ctx.actor.id)) throw leaseNotFound(input.id);
    return toLease(lease, ctx.now);
  },
});
