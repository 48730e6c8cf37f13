import { BatonError } from '../../errors.ts';

/**
 * Where to land after signing in: a path on this server only, never another site (no open
 * redirect). Refused: anything not starting with one `/` (so `//evil.example`, `/\evil.example`,
 * `https://…`, `javascript:…`), control characters, and anything whose resolution leaves the
 * server's origin or starts with `//` (`/.//evil.example`). Undefined means the app's start page.
 */
export function safeReturnTo(value: unknown, baseUrl: string): string {
  if (value === undefined || value === '') return '/';
  const refuse = () => new BatonError('sign_in_failed', 'return_to must be a path on this server (e.g. /tasks/tsk_…), not another site.');
  if (typeof value !== 'string' || value.length > 2000 || !value.startsWith('/') || /^\/[/\\]/.test(value) || /[\u0000-\u001f\u007f\\]/.test(value)) throw refuse();
  const base = new URL(baseUrl);
  const resolved = new URL(value, base);
  const path = resolved.pathname + resolved.search + resolved.hash;
  // Dot segments resolve away: `/.//evil.example` is the path `//evil.example`, which a browser
  // reads as another site. What is sent is checked, not only what was given.
  if (resolved.origin !== base.origin || /^\/[/\\]/.test(path)) throw refuse();
  return path;
}
