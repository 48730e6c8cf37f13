import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DOCUMENTED_EXAMPLE_KEYS, isPlaceholderKey } from './idempotency-key.ts';

describe('isPlaceholderKey', () => {
  it.each([
    '<unique>', '<uuid>', '<...>', '', '   ', '...', '…',
    '{{uuid}}', '{{ idempotency_key }}', '{{$guid}}', '${KEY}', '${uuid}', '$(uuidgen)', '$(date +%s)', '%IDEMPOTENCY_KEY%',
    'YOUR_KEY_HERE', 'IDEMPOTENCY_KEY', 'UNIQUE_KEY', 'YOUR_UUID', 'INSERT_UUID_HERE',
    ...DOCUMENTED_EXAMPLE_KEYS,
  ])('refuses %j', (key) => {
    expect(isPlaceholderKey(key)).toBe(true);
  });

  it.each([
    randomUUID(), randomUUID().toUpperCase(), '01JDZ8Q6W9X5E3B2T7N4K1M0RA', 'task-123-attempt-2', 'release-notes', 'retry_2', 'abc',
    'Q3Zr8V0kfj2LwX1b', 'DEPLOY_PROD', 'TASK-123',
  ])('accepts the real key %j', (key) => {
    expect(isPlaceholderKey(key)).toBe(false);
  });

  it('accepts the random keys next_actions offer', () => {
    for (let i = 0; i < 10_000; i++) expect(isPlaceholderKey(randomBytes(12).toString('base64url'))).toBe(false);
  });
});
