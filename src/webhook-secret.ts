import { createHmac } from 'node:crypto';
import { BatonError } from './errors.ts';

/** How a webhook's signing secret is found: derived from the server key and the row id, never stored. */
export const DERIVED_V1 = 'derived:v1';

/** `derived:v1` is generation 1; a rotation moves to `derived:v1:2`, `derived:v1:3`, … */
function generationOf(secretRef: string, id: string): number {
  if (secretRef === DERIVED_V1) return 1;
  const match = /^derived:v1:(\d{1,9})$/.exec(secretRef);
  if (!match?.[1]) throw new Error(`unknown secretRef ${secretRef} on ${id}`);
  return Number(match[1]);
}

/** The secretRef after a rotation: the next generation, so the old secret stops verifying at once. */
export function nextSecretRef(secretRef: string, id: string): string {
  return `${DERIVED_V1}:${generationOf(secretRef, id) + 1}`;
}

/**
 * The signing secret of a webhook whose `secretRef` is `derived:v1[:<generation>]`: `whsec_` + base64
 * of HMAC-SHA256(BATON_SECRET_KEY, "webhook:" + id, then ":" + generation after a rotation), the
 * Standard Webhooks secret format. Throws `secret_key_missing` when the server has no key.
 */
export function webhookSecret(secretKey: string | undefined, secretRef: string, id: string): string {
  const generation = generationOf(secretRef, id);
  if (!secretKey) throw new BatonError('secret_key_missing', 'BATON_SECRET_KEY is not set on this server, so no webhook secret can be derived.');
  const input = generation === 1 ? `webhook:${id}` : `webhook:${id}:${generation}`;
  return `whsec_${createHmac('sha256', secretKey).update(input).digest('base64')}`;
}
