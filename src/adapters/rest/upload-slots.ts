import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { BatonError } from '../../errors.ts';
import { hashToken } from '../../tokens.ts';

/**
 * An `onRequest` hook for the artifact upload route that bounds, before any of the body is read,
 * how many uploads this instance reads at once (`uploads_busy`, 503) and how many one token sends
 * at once (`too_many_uploads`, 429); both retryable, with `Retry-After: 1`. A body no larger than
 * the ordinary request limit is not an upload; one without a `Content-Length` is. A slot is given
 * back when the response is over or the connection closes. One per app: the counts are this
 * instance's own.
 */
export function uploadSlots(config: Config): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  let reading = 0;
  /** Uploads in progress per Authorization header, kept by its hash (the header holds a secret); no header: one shared key. */
  const perToken = new Map<string, number>();
  const { perInstance, perToken: tokenLimit } = config.uploads;
  return async (request, reply) => {
    const length = Number(request.headers['content-length'] ?? NaN);
    if (Number.isFinite(length) && length <= config.bodyLimitBytes) return;
    const token = hashToken(request.headers.authorization ?? '').toString('hex');
    const mine = perToken.get(token) ?? 0;
    if (mine >= tokenLimit) {
      throw new BatonError('too_many_uploads', `This token already has ${mine} artifact upload(s) in progress; the limit is ${tokenLimit} (BATON_UPLOADS_PER_TOKEN).`);
    }
    if (reading >= perInstance) {
      throw new BatonError('uploads_busy', `This server is already reading ${reading} artifact uploads; the limit is ${perInstance} (BATON_UPLOADS_PER_INSTANCE).`);
    }
    reading++;
    perToken.set(token, mine + 1);
    reply.raw.once('close', () => {
      reading--;
      const left = (perToken.get(token) ?? 1) - 1;
      if (left > 0) perToken.set(token, left);
      else perToken.delete(token);
    });
  };
}
