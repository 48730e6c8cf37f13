import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { listen } from '../mcp/clients.ts';
import type { TestServer } from '../harness.ts';
import { type Outcome, runBaton, type Started, startBaton } from './run-baton.ts';

/** The real `baton` binary against an in-process test server listening on a port, each run with a token of its own. */
export interface ListeningCli {
  readonly url: string;
  /** `baton …args` with `token`; fails the test with its output unless it exits `expected`. */
  baton(token: string, args: string[], expected?: number): Promise<Outcome>;
  /** `baton …args` with `token`, not waited for; `stdin: 'pipe'` leaves its input open. */
  start(token: string, args: string[], stdin?: 'ignore' | 'pipe'): Started;
  /** A todo task made by the admin over REST; its id. */
  newTask(title: string): Promise<string>;
  close(): Promise<void>;
}

export async function listeningCli(t: TestServer): Promise<ListeningCli> {
  const url = await listen(t);
  const scratch = await mkdtemp(join(tmpdir(), 'baton-cli-'));
  const env = (token: string) => ({ BATON_URL: url, BATON_TOKEN: token, XDG_CONFIG_HOME: join(scratch, 'config') });
  return {
    url,
    async baton(token, args, expected = 0) {
      const result = await runBaton(args, env(token));
      if (result.code !== expected) throw new Error(`baton ${args.join(' ')} exited ${result.code}, expected ${expected}:\n${result.stdout}\n${result.stderr}`);
      return result;
    },
    start: (token, args, stdin = 'ignore') => startBaton(args, env(token), stdin),
    async newTask(title) {
      const created = await t.request('POST', '/api/v1/tasks', { token: t.adminToken, body: { title } });
      expect(created.status, created.body).toBe(201);
      return created.json<{ id: string }>().id;
    },
    close: () => rm(scratch, { recursive: true, force: true }),
  };
}
