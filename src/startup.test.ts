import { mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { generateToken } from './tokens.ts';
import { bootstrapTokenNotice } from './startup.ts';

describe('bootstrapTokenNotice', () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'baton-bootstrap-notice-'));
  });
  afterEach(() => rm(scratch, { recursive: true, force: true }));
  const token = generateToken();

  it('prints the token once on a terminal, and writes no file', async () => {
    const config = loadConfig({ BATON_DATA_DIR: join(scratch, 'data') });
    expect(await bootstrapTokenNotice(token, config, true)).toContain(`\n  ${token}\n`);
    await expect(stat(join(scratch, 'bootstrap-admin-token'))).rejects.toThrow(/ENOENT/);
  });

  it('off a terminal, writes it beside the data directory, readable by its owner only (even over an older file), and names only the file', async () => {
    const config = loadConfig({ BATON_DATA_DIR: join(scratch, 'data') });
    const file = join(scratch, 'bootstrap-admin-token');
    await writeFile(file, 'stale\n', { mode: 0o644 });
    const notice = await bootstrapTokenNotice(token, config, false);
    expect(notice).not.toContain(token);
    expect(notice).toContain(`Bootstrap admin token written to ${file} `);
    expect(notice).toContain('baton admin-token');
    expect(await readFile(file, 'utf8')).toBe(`${token}\n`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('never writes through a link planted at the path (a shared directory such as /tmp): says it could not, and leaves the link\'s target alone', async () => {
    const config = loadConfig({ BATON_DATA_DIR: join(scratch, 'data') });
    const target = join(scratch, 'elsewhere');
    await writeFile(target, 'not yours\n', { mode: 0o644 });
    await symlink(target, join(scratch, 'bootstrap-admin-token'));
    const notice = await bootstrapTokenNotice(token, config, false);
    expect(notice).not.toContain(token);
    expect(notice).toMatch(/could not be written to .*bootstrap-admin-token \(EEXIST[\s\S]*baton admin-token/);
    expect(await readFile(target, 'utf8')).toBe('not yours\n');
  });

  it('never repeats a token the operator chose (BATON_BOOTSTRAP_TOKEN)', async () => {
    const config = loadConfig({ BATON_DATA_DIR: join(scratch, 'data'), BATON_BOOTSTRAP_TOKEN: token });
    for (const terminal of [true, false]) expect(await bootstrapTokenNotice(token, config, terminal)).not.toContain(token);
  });

  it('when the file cannot be written, says so and how to mint one, without the token', async () => {
    await writeFile(join(scratch, 'file'), '');
    const config = loadConfig({ BATON_DATA_DIR: join(scratch, 'file', 'data') });
    const notice = await bootstrapTokenNotice(token, config, false);
    expect(notice).not.toContain(token);
    expect(notice).toMatch(/could not be written to .*bootstrap-admin-token[\s\S]*baton admin-token/);
  });
});
