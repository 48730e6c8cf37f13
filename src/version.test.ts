import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { BATON_VERSION, readVersion } from './version.ts';

it('is the version package.json gives', async () => {
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  expect(BATON_VERSION).toBe(pkg.version);
  expect(readVersion()).toBe(pkg.version);
});
