import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);

it('npm start refuses arguments instead of serving: `node src/main.ts migrate` exits 2 and names the command line', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'baton-start-args-'));
  try {
    const failure = await run(process.execPath, ['src/main.ts', 'migrate'], { env: { ...process.env, BATON_DATA_DIR: dataDir, PORT: '0' }, timeout: 20_000 }).then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain('takes no arguments, got: migrate');
    expect(failure?.stderr).toContain('npx baton-tasks serve | migrate | token | mcp');
    expect(failure?.stdout).not.toContain('Baton is serving');
    // Nothing was started: the data directory is untouched.
    expect(await readdir(dataDir)).toEqual([]);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
