import { BatonError } from '../errors.ts';
import { unsafeText } from '../operations/shared/text.ts';

/**
 * Idempotency keys copied from a template rather than made for one write. Accepting one would let
 * an agent's first write succeed and its next, different write fail as `idempotency_key_reused`
 * (or, worse, replay someone's example); so they are refused before anything runs.
 */

/** Template syntax: `<…>`, `{{…}}`, `${…}`, `$(…)`, `%…%`, an ellipsis, or nothing but blanks. */
const TEMPLATE_SYNTAX = /^\s*$|[<>]|\{\{|\}\}|\$\{|\$\(|%[A-Za-z_]+%|\.\.\.|…/;

/** ALL_CAPS words joined by underscores (`YOUR_KEY_HERE`, `IDEMPOTENCY_KEY`), one of them a placeholder's word. */
const CAPS_WORDS = /^[A-Z]+(?:_[A-Z]+)+$/;
const PLACEHOLDER_WORDS = new Set(['YOUR', 'MY', 'KEY', 'HERE', 'UUID', 'ULID', 'ID', 'IDEMPOTENCY', 'UNIQUE', 'TOKEN', 'VALUE', 'RANDOM', 'PLACEHOLDER', 'EXAMPLE', 'REPLACE', 'INSERT', 'NEW', 'SOME']);

/**
 * The example keys of Baton's own docs and spec pages (spec/api.md, spec/mcp.md,
 * spec/agent-guide.md): an agent that copies an example verbatim must not get its first write through.
 */
export const DOCUMENTED_EXAMPLE_KEYS: readonly string[] = ['q3Zr8V0kfj2LwX1a'];

/** True when `key` is a placeholder or a documented example, not a key made for one write. */
export function isPlaceholderKey(key: string): boolean {
  if (TEMPLATE_SYNTAX.test(key)) return true;
  const trimmed = key.trim();
  if (CAPS_WORDS.test(trimmed) && trimmed.split('_').some((word) => PLACEHOLDER_WORDS.has(word))) return true;
  return DOCUMENTED_EXAMPLE_KEYS.includes(trimmed);
}

/** What a good key looks like, for the refusal's hint. */
export const FRESH_KEY_HINT =
  'Send a fresh unique value as the key of every distinct write: a UUID (crypto.randomUUID(), uuidgen), a ULID, or a name of your own such as task-123-attempt-2. Never a template placeholder ({{uuid}}, ${KEY}, <unique>, YOUR_KEY_HERE) or a key copied from the docs; reuse a key only to retry the identical write.';

const MAX_KEY_LENGTH = 255;

/** The key a write was sent with, or the refusal: none, a placeholder, too long, or with characters a key must not hold. */
export function requireKey(key: string | undefined): string {
  if (key === undefined) {
    throw new BatonError('idempotency_key_required', 'This write needs an Idempotency-Key so that a retry cannot apply it twice.');
  }
  if (isPlaceholderKey(key)) {
    throw new BatonError('idempotency_key_required', `The Idempotency-Key ${JSON.stringify(key)} is empty, a template placeholder or an example from the docs, not a key made for this write.`, { hint: FRESH_KEY_HINT });
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new BatonError('idempotency_key_required', `The Idempotency-Key is ${key.length} characters; the limit is ${MAX_KEY_LENGTH}.`);
  }
  const unsafe = unsafeText(key);
  if (unsafe) throw new BatonError('idempotency_key_required', `The Idempotency-Key ${unsafe}.`);
  return key;
}
