import { readFileSync } from 'node:fs';

/** Baton's release, as package.json gives it; servers name themselves with it (MCP `serverInfo`). src/version.test.ts holds the two equal. */
export const BATON_VERSION = '0.2.0';

/**
 * The release that runs, read from package.json (one level above `src/`, in the checkout and in the
 * package alike). Called once at start (`createServer`, the `baton` program) and passed down.
 */
export function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  if (typeof pkg.version !== 'string') throw new Error('package.json has no version');
  return pkg.version;
}
