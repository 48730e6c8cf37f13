import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * What a link in a notification carries (spec/notifications.md, "Links"): signed with a key derived
 * from the server's cursor key (shared by every instance through the database), so any instance
 * checks it; `id` is recorded when the link is used, so it works once.
 */
const claimsSchema = z.strictObject({
  /** The link's own id, recorded on use. */
  id: z.string().min(1).max(40),
  /** The person it was sent to: only they may use it. */
  to: z.string().min(1).max(40),
  task: z.string().min(1).max(40),
  item: z.string().min(1).max(40),
  /** The ask it answers, with `option` (an index into the ask's options). */
  ask: z.string().min(1).max(40).optional(),
  option: z.int().min(0).max(99).optional(),
  /** Expiry, Unix seconds. */
  exp: z.int(),
});

export type LinkClaims = z.infer<typeof claimsSchema>;

/** The key links are signed with, derived from the cursor key (src/store/server-keys.ts). */
export function linkKey(cursorKey: Uint8Array): Buffer {
  return createHmac('sha256', cursorKey).update('baton notification links').digest();
}

/** A fresh link id: 16 random bytes. */
export function newLinkId(): string {
  return randomBytes(16).toString('base64url');
}

/** `<claims as base64url JSON>.<HMAC-SHA256 of them, base64url>`. */
export function signLink(key: Uint8Array, claims: LinkClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

/** The claims of a link this server signed; undefined for anything else (altered, truncated, foreign). */
export function readLink(key: Uint8Array, token: string): LinkClaims | undefined {
  const [body, signature, extra] = token.split('.');
  if (body === undefined || signature === undefined || extra !== undefined) return undefined;
  const expected = Buffer.from(mac(key, body));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const parsed = claimsSchema.safeParse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function mac(key: Uint8Array, body: string): string {
  return createHmac('sha256', key).update(body).digest('base64url');
}
