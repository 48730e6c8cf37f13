import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { appendRunLog, findRunUsage } from '../../store/runs.ts';
import { defineOperation } from '../define-operation.ts';
import { lockLiveLease } from '../leases/held-lease.ts';
import { leaseId } from '../leases/lease-schema.ts';
import { RUN_LOG_BATCH_MAX, RUN_LOG_LINE_MAX, RUN_LOG_MAX_LINES } from '../../domain/run-log.ts';

export const appendLog = defineOperation({
  name: 'runs_log',
  summary: "Append lines to your run's log; humans read it with runs_get. At most 500 lines a run: put more in an artifact.",
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/leases/{id}/log' },
  input: z.strictObject({
    id: leaseId,
    lines: z.array(z.string().min(1).max(RUN_LOG_LINE_MAX)).min(1).max(RUN_LOG_BATCH_MAX),
    level: z.enum(['info', 'warn', 'error']).default('info'),
  }),
  output: z.object({ id: z.string(), log_lines: z.int().describe('Lines the log now holds.') }),
  async run(tx, ctx, input) {
    const { lease } = await lockLiveLease(tx, input.id, ctx.actor, ctx, false);
    const had = (await findRunUsage(tx, lease.id))?.log_lines ?? 0;
    if (had + input.lines.length > RUN_LOG_MAX_LINES) {
      throw new BatonError('run_log_full', `Run ${lease.id} holds ${had} of ${RUN_LOG_MAX_LINES} log lines; ${input.lines.length} more do not fit.`, {
        extra: { log_lines: had, max_lines: RUN_LOG_MAX_LINES },
      });
    }
    await appendRunLog(tx, lease.id, { lines: input.lines, level: input.level, had }, ctx.now);
    ctx.emit({ type: 'run.logged', subject: lease.task_id, data: { lease_id: lease.id, level: input.level, from_seq: had + 1, lines: input.lines.length } });
    return { id: lease.id, log_lines: had + input.lines.length };
  },
});
