import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The embedded server's secret key: read from `<dataDir>/secret.key`, or made (32 random bytes, hex)
 * and written there, readable by the owner only, on first start. It lives beside the data it protects.
 */
export async function embeddedSecretKey(dataDir: string): Promise<string> {
  const path = join(dataDir, 'secret.key');
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing?.trim()) return existing.trim();
  const key = randomBytes(32).toString('hex');
  // 'wx': if another process made it first, keep theirs.
  await writeFile(path, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
  return (await readFile(path, 'utf8')).trim();
}
