import { z } from 'zod';
import { findReservation, updateReservation } from '../../store/reservations.ts';
import { defineOperation } from '../define-operation.ts';
import { assertLive, epochParam, lockLiveReservation, reservationId, reservationOutput, toReservation, ttlParam } from './reservation-schema.ts';

export const heartbeatReservation = defineOperation({
  name: 'reservations_heartbeat',
  summary: 'Keep a reservation you hold alive: it now expires TTL seconds from now.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/reservations/{id}/heartbeat' },
  input: z.strictObject({ id: reservationId, epoch: epochParam, ttl_s: ttlParam.optional() }),
  output: reservationOutput,
  async run(tx, ctx, input) {
    const row = await lockLiveReservation(tx, input, ctx.actor, false);
    assertLive(row, input.epoch, ctx.now);
    const ttl = input.ttl_s ?? row.ttl_s;
    await updateReservation(tx, row.id, { ttl_s: ttl, renewed_at: ctx.now, expires_at: new Date(ctx.now.getTime() + ttl * 1000) });
    const renewed = await findReservation(tx, row.id);
    return toReservation(renewed ?? row, ctx.now);
  },
});
