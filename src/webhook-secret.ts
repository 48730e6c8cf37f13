import { createHmac } from 'node:crypto';
import { BatonError } from './errors.ts';

/** How a webhook's signing secret is found: derived from the server key and the row id, never stored. */
export const DERIVED_V1 = 'derived:v1';

/**
 * The signing secret of a webhook whose `secretRef` is `derived:v1`: `whsec_` + base64 of
 * HMAC-SHA256(BATON_SECRET_KEY, "webhook:" + id), the Standard Webhooks secret format.
 * Throws `secret_key_missing` when the server has no key.
 */
export function webhookSecret(secretKey: string | undefined, secretRef: string, id: string): string {
  if (secretRef !== DERIVED_V1) throw new Error(`unknown secretRef ${secretRef} on ${id}`);
  if (!secretKey) throw new BatonError('secret_key_missing', 'BATON_SECRET_KEY is not set on this server, so no webhook secret can be derived.');
  return `whsec_${createHmac('sha256', secretKey).update(`webhook:${id}`).digest('base64')}`;
}
