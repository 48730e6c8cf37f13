import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findAsk, lockAsk, lockAskTask } from '../../store/asks.ts';
import { defineOperation } from '../define-operation.ts';
import { closeAsk } from './ask-flow.ts';
import { askId, askNotFound, askOutput, toAsk } from './ask-schema.ts';

export const cancelAsk = defineOperation({
  name: 'asks_cancel',
  summary: 'Withdraw an open ask you made (a human may withdraw any).',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/asks/{id}/cancel' },
  input: z.strictObject({ id: askId }),
  output: askOutput,
  async run(tx, ctx, input) {
    const found = await findAsk(tx, input.id);
    if (!found) throw askNotFound(input.id);
    await lockAskTask(tx, found.task_id);
    const row = await lockAsk(tx, input.id);
    if (!row) throw askNotFound(input.id);
    if (row.asked_by_id !== ctx.actor.id && ctx.actor.kind !== 'human') {
      throw new BatonError('not_your_task', `Ask ${row.id} was made by ${row.asked_by_id}; only its asker or a human withdraws it.`);
    }
    if (row.status !== 'open') throw new BatonError('ask_closed', `Ask ${row.id} is ${row.status}.`, { extra: { ask_status: row.status, answer: row.answer } });
    const closed = await closeAsk(tx, row, { status: 'cancelled', answer: null, reason: 'withdrawn' }, { id: ctx.actor.id, kind: ctx.actor.kind, now: ctx.now, ids: ctx.ids });
    ctx.emit(closed.event);
    return toAsk(closed.ask);
  },
});
