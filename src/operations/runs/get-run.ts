import { z } from 'zod';
import { findLease } from '../../store/leases.ts';
import { findRunUsage, runLogTail } from '../../store/runs.ts';
import { defineOperation } from '../define-operation.ts';
import { leaseNotFound } from '../leases/held-lease.ts';
import { leaseId } from '../leases/lease-schema.ts';
import { runLogLine, runOutput, toLogLine, toRun } from './run-schema.ts';
import { RUN_LOG_MAX_LINES } from '../../domain/run-log.ts';

export const getRun = defineOperation({
  name: 'runs_get',
  summary: 'Read one run (a lease): who, when, outcome, usage, and the tail of its log.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/runs/{id}' },
  input: z.strictObject({ id: leaseId, log_lines: z.coerce.number().int().min(0).max(RUN_LOG_MAX_LINES).default(100).describe('How many of the last log lines to include.') }),
  output: runOutput.extend({ log: z.array(runLogLine).max(RUN_LOG_MAX_LINES) }),
  async run(db, ctx, input) {
    const lease = await findLease(db, input.id);
    // Another agent's run is not yours to see, as its lease is not: answered as absent.
    if (!lease || (ctx.actor.kind !== 'human' && lease.holder_id !== ctx.actor.id)) throw leaseNotFound(input.id);
    const [usage, log] = await Promise.all([findRunUsage(db, lease.id), runLogTail(db, lease.id, input.log_lines)]);
    return { ...toRun(lease, usage, ctx.now), log: log.map(toLogLine) };
  },
});
