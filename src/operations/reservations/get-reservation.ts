import { z } from 'zod';
import { findReservation } from '../../store/reservations.ts';
import { defineOperation } from '../define-operation.ts';
import { reservationId, reservationNotFound, reservationOutput, toReservation } from './reservation-schema.ts';

export const getReservation = defineOperation({
  name: 'reservations_get',
  summary: 'Read one reservation.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/reservations/{id}' },
  input: z.strictObject({ id: reservationId }),
  output: reservationOutput,
  async run(db, ctx, input) {
    const row = await findReservation(db, input.id);
    if (!row) throw reservationNotFound(input.id);
    return toReservation(row, ctx.now);
  },
});
