import { BatonError } from '../../errors.ts';

/** Refuses a write whose If-Match (or `expected_version`) is not the resource's current version. */
export function assertVersion(what: string, current: number, expected: number | undefined): void {
  if (expected === undefined || expected === current) return;
  const said = expected < 0 ? 'your If-Match names no current version (weak and non-numeric tags never match)' : `your If-Match said ${expected}`;
  throw new BatonError('conflict_version', `${what} is at version ${current}; ${said}.`, {
    extra: { current_version: current },
    headers: { etag: `"${current}"` },
  });
}
