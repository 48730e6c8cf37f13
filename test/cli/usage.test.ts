import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runBaton } from './run-baton.ts';

/** What the real `baton` binary answers without a server: its version, usage errors, shell completion. */

describe('baton --version', () => {
  it('prints the version package.json gives, and exits 0', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const { code, stdout } = await runBaton([flag]);
      expect(stdout).toBe(`${version}\n`);
      expect(code).toBe(0);
    }
  });
});
