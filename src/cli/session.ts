import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import envPaths from 'env-paths';

/** What `baton login` keeps: where the server is and the token to send it. */
export interface Login {
  readonly url: string;
  readonly token: string;
}

/** The per-user config file: `$XDG_CONFIG_HOME/baton/config.json` (~/.config/baton on Linux), or BATON_CONFIG. */
export function configPath(env: Record<string, string | undefined>): string {
  return env.BATON_CONFIG ?? join(envPaths('baton', { suffix: '' }).config, 'config.json');
}

export async function readLogin(path: string): Promise<Partial<Login>> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Partial<Login>;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return {};
    throw new Error(`${path} is not a baton config file (${(error as Error).message}); delete it and run baton login again`, { cause: error });
  }
}

/** Writes the login readable by its owner only (0600, in a 0700 directory): it holds a bearer token. */
export async function saveLogin(path: string, login: Login): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  // An existing file keeps its mode on write: make sure.
  await chmod(path, 0o600);
}

/** BATON_URL and BATON_TOKEN override the saved login, each on its own. */
export function effectiveLogin(env: Record<string, string | undefined>, saved: Partial<Login>): Partial<Login> {
  const url = env.BATON_URL || saved.url;
  const token = env.BATON_TOKEN || saved.token;
  return { ...(url ? { url } : {}), ...(token ? { token } : {}) };
}
