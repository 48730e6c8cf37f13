import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const INSTALL = 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium';

it('npm test’s pretest stops at once with the exact install line when the browser is missing and nothing can install it', async () => {
  // No apt-get or sudo on this PATH: the script cannot install, so it must say how.
  const failure = await run('/bin/bash', ['scripts/ensure-chromium.sh'], { env: { PATH: '/nonexistent', BATON_TEST_CHROMIUM: '/nonexistent/chromium' } }).then(
    () => undefined,
    (error: unknown) => error as { code: number; stderr: string },
  );
  expect(failure?.code).toBe(1);
  expect(failure?.stderr).toContain('/nonexistent/chromium is missing');
  expect(failure?.stderr).toContain(`  ${INSTALL}\n`);
});

it('npm test’s pretest passes quietly when the browser is there', async () => {
  const { stdout, stderr } = await run('/bin/bash', ['scripts/ensure-chromium.sh'], { env: { PATH: '/nonexistent', BATON_TEST_CHROMIUM: '/bin/sh' } });
  expect(stdout + stderr).toBe('');
});
