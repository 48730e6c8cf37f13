import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';

const run = promisify(execFile);
// --no-install-recommends: chromium's recommends pull about 130 more packages and upgrade systemd.
const INSTALL = 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium';
const scratch: string[] = [];

afterEach(async () => {
  await Promise.all(scratch.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/**
 * A PATH holding stand-ins for `id` (printing `uid`), `apt-get` (recording its arguments instead
 * of installing) and, when given, a `sudo` that runs its command; `sh` is the real one.
 */
async function fakeTools(uid: number, withSudo: boolean): Promise<{ path: string; calls: () => Promise<string[]> }> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-ensure-chromium-'));
  scratch.push(dir);
  const log = join(dir, 'apt-get.log');
  const tools: Record<string, string> = {
    id: `#!/bin/sh\necho ${uid}\n`,
    'apt-get': `#!/bin/sh\necho "apt-get $*" >> ${log}\n`,
    ...(withSudo ? { sudo: '#!/bin/sh\n[ "$1" = -n ] && shift\n[ "$#" -eq 0 ] && exit 0\n"$@"\n' } : {}),
  };
  for (const [name, text] of Object.entries(tools)) {
    await writeFile(join(dir, name), text);
    await chmod(join(dir, name), 0o755);
  }
  await symlink('/bin/sh', join(dir, 'sh'));
  return { path: dir, calls: async () => (await readFile(log, 'utf8')).trim().split('\n') };
}

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

it.each([
  ['as root', 0, false],
  ['through passwordless sudo', 1000, true],
])('npm test’s pretest installs chromium without its recommended packages %s', async (_, uid, withSudo) => {
  const tools = await fakeTools(uid, withSudo);
  await run('/bin/bash', ['scripts/ensure-chromium.sh'], { env: { PATH: tools.path, BATON_TEST_CHROMIUM: '/nonexistent/chromium' } });
  expect(await tools.calls()).toEqual(['apt-get update -qq', 'apt-get install -y -qq --no-install-recommends chromium']);
});

it('npm test’s pretest passes quietly when the browser is there', async () => {
  const { stdout, stderr } = await run('/bin/bash', ['scripts/ensure-chromium.sh'], { env: { PATH: '/nonexistent', BATON_TEST_CHROMIUM: '/bin/sh' } });
  expect(stdout + stderr).toBe('');
});
