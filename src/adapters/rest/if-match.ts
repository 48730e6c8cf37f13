import { BatonError } from '../../errors.ts';

/** The longest If-Match or If-None-Match accepted: room for a list of tags, far below the header limit. */
export const PRECONDITION_MAX = 256;

/** The header, or a 400 invalid_precondition when it is longer than PRECONDITION_MAX. */
export function bounded(name: string, header: string): string {
  if (header.length > PRECONDITION_MAX) throw new BatonError('invalid_precondition', `${name} is ${header.length} characters; at most ${PRECONDITION_MAX} are accepted.`);
  return header;
}

/** A version no resource has: what a weak or unknown-shape tag compares as, so it never matches. */
const NEVER = -1;

/**
 * Parses If-Match into an expected version. `*` and absence mean any version; a weak tag (`W/"3"`)
 * never matches (strong comparison, RFC 9110 §13.1.1); anything that is not an entity-tag is a 400.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const tag = bounded('If-Match', header).trim();
  if (/^W\/"[^"]*"$/.test(tag)) return NEVER;
  const match = /^"(\d{1,9})"$/.exec(tag);
  if (match?.[1]) return Number(match[1]);
  if (/^"[^"]*"$/.test(tag)) return NEVER;
  throw new BatonError('invalid_precondition', `If-Match ${JSON.stringify(header)} is not an entity-tag.`);
}

/** True when If-None-Match names the current version or content hash (or `*`), so a GET may answer 304; past PRECONDITION_MAX, a 400. */
export function ifNoneMatchHits(header: string | undefined, version: number | string): boolean {
  if (header === undefined) return false;
  return bounded('If-None-Match', header).split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === `"${version}"` || t === `W/"${version}"`;
  });
}

/** The Idempotency-Key header, bare or as a quoted string (both forms of the IETF draft). */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = header.trim();
  return /^".*"$/.test(key) ? key.slice(1, -1) : key;
}
