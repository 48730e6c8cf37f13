import { z } from 'zod';
import { findReservation, updateReservation } from '../../store/reservations.ts';
import { defineOperation } from '../define-operation.ts';
import { assertLive, epochParam, lockLiveReservation, reservationId, reservationOutput, toReservation } from './reservation-schema.ts';

export const releaseReservation = defineOperation({
  name: 'reservations_release',
  summary: 'Let go of a reservation you hold.',
  description: 'A human or an agents:admin may release anyone\'s.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/reservations/{id}/release' },
  input: z.strictObject({ id: reservationId, epoch: epochParam }),
  output: reservationOutput,
  async run(tx, ctx, input) {
    const row = await lockLiveReservation(tx, input, ctx.actor, true);
    assertLive(row, input.epoch, ctx.now);
    await updateReservation(tx, row.id, { ended_at: ctx.now, end_reason: 'released' });
    ctx.emit({ type: 'reservation.released', subject: row.id, data: { holder: { id: row.holder_id, kind: row.holder_kind }, epoch: row.epoch } });
    const released = await findReservation(tx, row.id);
    return toReservation(released ?? row, ctx.now);
  },
});
