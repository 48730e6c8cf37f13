import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BatonError } from '../../errors.ts';
import type { Service } from '../../service/service.ts';
import type { MaintenanceReport } from '../../domain/maintenance-report.ts';

/**
 * `GET|POST /cron/keepalive`: for hosts that freeze idle processes, a scheduler calls it with
 * `Authorization: Bearer $CRON_SECRET`; it touches the database and runs one pass of every
 * maintenance loop, answering with the report. No Baton token is involved: the passes act as `system`.
 */
export function registerCronRoute(app: FastifyInstance, service: Service, runMaintenance: () => Promise<MaintenanceReport>): void {
  app.route({
    method: ['GET', 'POST'],
    url: '/cron/keepalive',
    handler: async (request, reply) => {
      checkCronSecret(request, service.config.cronSecret);
      const report = await runMaintenance();
      if (report.database !== 'ok') throw new BatonError('unavailable', 'The database did not answer; no maintenance ran.', { headers: { 'retry-after': '5' } });
      if (!report.ok) throw new BatonError('internal', 'A maintenance pass failed; the others ran (see `report`).', { extra: { report } });
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(report));
    },
  });
}

const CRON_HINT = 'Send `Authorization: Bearer <CRON_SECRET>` with the value configured on the server.';

function checkCronSecret(request: FastifyRequest, secret: string | undefined): void {
  if (!secret) throw new BatonError('not_configured', '/cron/keepalive is off: CRON_SECRET is not set on this server.');
  const header = request.headers.authorization;
  if (!header) throw new BatonError('unauthenticated', '/cron/keepalive needs the cron secret.', { hint: CRON_HINT });
  const given = /^Bearer\s+(.+)$/i.exec(header)?.[1] ?? '';
  // Compare digests: equal length, constant time, whatever was sent.
  if (!timingSafeEqual(digest(given), digest(secret))) throw new BatonError('invalid_token', 'The cron secret does not match.', { hint: CRON_HINT });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
