import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BATON, childEnv, runBaton } from './run-baton.ts';

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

describe('a reader that stops early', () => {
  it('ends baton quietly with exit 0 when its stdout is closed (`baton --help | head -1`)', async () => {
    const child = spawn(process.execPath, [BATON, '--help'], { env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before the process has written anything: its first write meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

describe('usage errors', () => {
  it('exit 2 everywhere: an unknown option, a bad option value, a login without a URL', async () => {
    const env = { BATON_CONFIG: '/nonexistent/baton-config.json' };
    const unknown = await runBaton(['tasks', 'list', '--bogus'], env);
    expect(unknown.stderr).toBe("error: unknown option '--bogus'\n(add --help for usage)\n");
    expect(unknown.code).toBe(2);
    const badValue = await runBaton(['tasks', 'list', '--limit', 'abc'], env);
    expect(badValue.stderr).toBe('error: --limit must be a whole number, got "abc"\n');
    expect(badValue.code).toBe(2);
    const login = await runBaton(['login', '--url', 'http://127.0.0.1:1'], env);
    expect(login.stderr).toBe('error: baton login needs --url and --token (or BATON_URL and BATON_TOKEN, or the token on stdin).\n');
    expect(login.code).toBe(2);
  });

  it('under --json are one JSON document on stderr, shaped like a problem, with the exit code', async () => {
    const unknown = await runBaton(['tasks', 'list', '--bogus', '--json']);
    expect(JSON.parse(unknown.stderr)).toEqual({ code: 'usage', detail: "unknown option '--bogus'", retryable: false, exit_code: 2 });
    expect(unknown.stdout).toBe('');
    expect(unknown.code).toBe(2);
    const badValue = await runBaton(['tasks', 'list', '--json', '--limit', 'abc']);
    expect(JSON.parse(badValue.stderr)).toEqual({ code: 'usage', detail: '--limit must be a whole number, got "abc"', retryable: false, exit_code: 2 });
    expect(badValue.code).toBe(2);
    const unreachable = await runBaton(['whoami', '--json'], { BATON_URL: 'http://127.0.0.1:9', BATON_TOKEN: 'bat_x' });
    expect(JSON.parse(unreachable.stderr)).toMatchObject({ code: 'unreachable', retryable: true, exit_code: 7 });
    expect(unreachable.code).toBe(7);
  });
});

describe('a BATON_URL that redirects', () => {
  it('is named with where it points, exit 7, and nothing is sent there', async () => {
    const asked: string[] = [];
    const proxy = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(301, { location: `https://baton.example${req.url}` }).end();
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    try {
      const env = { BATON_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, BATON_TOKEN: 'bat_x', BATON_CONFIG: '/nonexistent/baton-config.json' };
      const list = await runBaton(['tasks', 'list'], env);
      expect(list.stderr).toContain(`cannot reach the Baton server: ${env.BATON_URL} answers 301, redirecting to https://baton.example; set BATON_URL to that address.`);
      expect(list.code).toBe(7);
      const create = await runBaton(['tasks', 'create', 'redirected', '--json'], env);
      expect(JSON.parse(create.stderr)).toMatchObject({ code: 'unreachable', exit_code: 7 });
      expect(asked.map((request) => request.split('?')[0])).toEqual(['GET /api/v1/tasks', 'POST /api/v1/tasks']);
    } finally {
      proxy.close();
    }
  });
});

describe('baton completion', () => {
  it('prints a bash script offering every command and its options, and a zsh one built on it', async () => {
    const bash = await runBaton(['completion', 'bash']);
    expect(bash.code).toBe(0);
    expect(bash.stdout).toContain('complete -F _baton baton');
    expect(bash.stdout).toMatch(/^ {4}"tasks"\) words="[^"]*\blist\b[^"]*\bready\b/m);
    expect(bash.stdout).toMatch(/^ {4}"tasks list"\) words="[^"]*--cursor --all/m);
    const zsh = await runBaton(['completion', 'zsh']);
    expect(zsh.stdout).toMatch(/^autoload -U \+X compinit && compinit\nautoload -U \+X bashcompinit && bashcompinit\n/);
    expect((await runBaton(['completion', 'fish'])).code).toBe(2);
  });
});
