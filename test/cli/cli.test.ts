import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { engine, freshDatabase } from '../harness.ts';
import { bootstrapToken, freePort, runBaton, type Started, startBaton } from './run-baton.ts';

/**
 * The real `baton` binary against a real `baton serve` process, on this project's engine: every
 * command a person or an agent uses, `watch` across a server restart, and `admin-token` after the
 * bootstrap token is lost.
 */

let scratch: string;
let serverEnv: Record<string, string>;
let server: Started | undefined;
let url: string;
let adminToken: string;
/** The CLI's environment: its own config directory, nothing else of Baton's. */
let cliEnv: Record<string, string>;

/** Starts `baton serve`; on the first start, answers the bootstrap token it prints. */
async function startServer(first = false): Promise<string> {
  server = startBaton(['serve'], serverEnv);
  if (!first) return (await server.printed(/Baton is serving at/))[0];
  return await bootstrapToken(server);
}

async function stopServer(): Promise<void> {
  if (!server) return;
  server.child.kill('SIGTERM');
  await server.outcome;
  server = undefined;
}

/** `baton …args` as the logged-in user; fails the test with its output unless it exits `expected`. */
async function baton(args: string[], expected = 0, env: Record<string, string> = {}) {
  const result = await runBaton(args, { ...cliEnv, ...env });
  if (result.code !== expected) throw new Error(`baton ${args.join(' ')} exited ${result.code}, expected ${expected}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

async function json<T>(args: string[]): Promise<T> {
  return JSON.parse((await baton([...args, '--json'])).stdout) as T;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-cli-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  serverEnv = { PORT: String(port), HOST: '127.0.0.1', BATON_LOG_LEVEL: 'warn', BATON_DATA_DIR: join(scratch, 'data') };
  if (engine === 'pglite') {
    // `baton restore` of the migrated template: the data directory every server start here uses.
    serverEnv.BATON_DATA_DIR = join(scratch, 'data');
    const restored = await runBaton(['restore', inject('pgliteDump')], serverEnv);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`into ${serverEnv.BATON_DATA_DIR}`);
  } else {
    const { database, url: databaseUrl } = await freshDatabase();
    await database.close();
    serverEnv.DATABASE_URL = databaseUrl ?? '';
  }
  cliEnv = { XDG_CONFIG_HOME: join(scratch, 'config') };
  adminToken = await startServer(true);
  expect(adminToken).toMatch(/^bat_/);
}, 180_000);

afterAll(async () => {
  await stopServer();
  await rm(scratch, { recursive: true, force: true });
});

describe('baton login and whoami', () => {
  it('refuses a token whoami refuses, saving nothing; then saves a good one readable only by its owner', async () => {
    const refused = await baton(['login', '--url', url, '--token', 'bat_000000000000000000000000000000000000'], 3);
    expect(refused.stderr).toMatch(/^error: .*\(invalid_token, HTTP 401\)\. Hint: .+\n$/);
    await expect(stat(join(scratch, 'config/baton/config.json'))).rejects.toThrow();

    const { stdout } = await baton(['login', '--url', url, '--token', adminToken]);
    expect(stdout).toContain(`Logged in to ${url} as admin (human agt_`);
    expect((await stat(join(scratch, 'config/baton/config.json'))).mode & 0o777).toBe(0o600);
    expect((await baton(['whoami'])).stdout).toContain('admin (human agt_');
  });

  it('lets BATON_URL and BATON_TOKEN override the saved login, and says so when there is none', async () => {
    const none = await baton(['whoami'], 3, { XDG_CONFIG_HOME: join(scratch, 'nobody') });
    expect(none.stderr).toBe('error: Not logged in: run `baton login --url <server> --token <token>`, or set BATON_URL and BATON_TOKEN.\n');
    const env = { XDG_CONFIG_HOME: join(scratch, 'nobody'), BATON_URL: url, BATON_TOKEN: adminToken };
    expect((await baton(['whoami'], 0, env)).stdout).toContain('token from BATON_TOKEN');
    const unreachable = await baton(['whoami'], 7, { ...env, BATON_URL: `http://127.0.0.1:${await freePort()}` });
    expect(unreachable.stderr).toBe('error: cannot reach the Baton server: connection refused. Is it running? Check BATON_URL.\n');
  });
});

describe('baton tasks', () => {
  it('creates, lists, shows, updates, claims, heartbeats, releases and moves, with one-line problems', { timeout: 180_000 }, async () => {
    const created = await json<{ id: string; version: number }>(['tasks', 'create', 'Write the guide', '--label', 'cli', '-p', 'high']);
    // The same --idempotency-key replays the first answer instead of creating again.
    const once1 = await json<{ id: string }>(['tasks', 'create', 'Once only', '--idempotency-key', 'cli-test-once']);
    const once2 = await json<{ id: string }>(['tasks', 'create', 'Once only', '--idempotency-key', 'cli-test-once']);
    expect(once2.id).toBe(once1.id);

    const table = (await baton(['tasks', 'list', '--label', 'cli'])).stdout;
    expect(table).toMatch(/^ID\s+STATUS\s+PRIORITY\s+TITLE\s+LABELS\s+HOLDER\n/);
    expect(table).toMatch(new RegExp(`${created.id}  todo\\s+high\\s+Write the guide  cli\\n`));
    expect(table).not.toContain('\u001b['); // no colour off a terminal
    expect((await json<{ data: { id: string }[] }>(['tasks', 'list', '--status', 'todo'])).data.map((t) => t.id)).toContain(once1.id);
    // --search: the server's ranked search, the last word matched by its start as typed.
    expect((await json<{ data: { id: string }[] }>(['tasks', 'list', '--search', 'write the gui'])).data.map((t) => t.id)).toEqual([created.id]);
    expect((await baton(['tasks', 'list', '--search', 'the'], 6)).stderr).toMatch(/\(invalid_search, HTTP 400\)/);

    // update sends If-Match at the version it just read.
    const updated = await json<{ title: string; version: number }>(['tasks', 'update', created.id, '--title', 'Write the operations guide']);
    expect(updated).toMatchObject({ title: 'Write the operations guide', version: created.version + 1 });
    // A task's cap on spend: set on create, changed and removed on update.
    const capped = await json<{ id: string }>(['tasks', 'create', 'Capped', '--max-cost', '2', '--max-cost-currency', 'EUR']);
    const shown = () => json(['tasks', 'show', capped.id]);
    expect(await shown()).toMatchObject({ max_cost: 2, max_cost_currency: 'EUR' });
    await json(['tasks', 'update', capped.id, '--max-cost', '1.5']);
    expect(await shown()).toMatchObject({ max_cost: 1.5, max_cost_currency: 'EUR' });
    await json(['tasks', 'update', capped.id, '--max-cost', 'none']);
    expect(await shown()).not.toHaveProperty('max_cost');
    expect((await baton(['tasks', 'update', capped.id, '--max-cost', 'lots'], 2)).stderr).toContain('--max-cost must be an amount');
    // Archiving: refused while the task is open, then hidden from the list until asked for.
    expect((await baton(['tasks', 'update', capped.id, '--archive'], 5)).stderr).toMatch(/\(task_not_finished, HTTP 409\)/);
    await json(['tasks', 'update', capped.id, '--status', 'cancelled', '--archive']);
    const listed = async (...flags: string[]) => (await json<{ data: { id: string }[] }>(['tasks', 'list', '--all', ...flags])).data.map((t) => t.id);
    expect(await listed()).not.toContain(capped.id);
    expect(await listed('--archived', 'only')).toEqual([capped.id]);
    await json(['tasks', 'update', capped.id, '--unarchive']);
    expect(await listed()).toContain(capped.id);

    const [claim] = await json<{ task: { id: string }; lease: { id: string; epoch: number } }[]>(['tasks', 'claim', '--label', 'cli']);
    expect(claim?.task.id).toBe(created.id);
    // Nothing left to claim: exit 8, as `baton wait` when nothing arrives, so a shell loop can tell it from a claim.
    expect((await baton(['tasks', 'claim', '--label', 'cli'], 8)).stderr).toBe('nothing to claim\n');
    expect((await baton(['tasks', 'claim', '--label', 'cli', '--json'], 8)).stdout).toBe('[]\n');
    expect((await baton(['tasks', 'heartbeat', created.id, '--note', 'half way'])).stdout).toContain(`lease ${claim?.lease.id} expires`);
    expect((await baton(['tasks', 'show', created.id])).stdout).toMatch(/status\s+in_progress/);

    const illegal = await baton(['tasks', 'move', created.id, 'done'], 5);
    expect(illegal.stderr.split('\n')).toHaveLength(2); // one line, then the final newline
    expect(illegal.stderr).toMatch(/^error: .* \(invalid_transition, HTTP 422\)\. Hint: .+/);

    const released = await baton(['tasks', 'release', created.id, '--note', 'over to you']);
    expect(released.stderr).toBe(`released ${created.id}\n`);
    await baton(['tasks', 'claim', created.id]);
    expect((await baton(['tasks', 'move', created.id, 'in_review'])).stderr).toBe(`${created.id} is now in_review\n`);

    const events = (await baton(['tasks', 'events', created.id])).stdout;
    for (const type of ['task.created', 'task.updated', 'task.claimed', 'lease.renewed', 'lease.released', 'task.status_changed']) expect(events).toContain(type);

    const missing = await baton(['tasks', 'show', 'tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV'], 4);
    expect(missing.stderr).toMatch(/^error: No task tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV \(not_found, HTTP 404\)\. Hint: .+\n$/);
    // The hint names the CLI's command where REST's names the route.
    expect(missing.stderr).toContain('Hint: List tasks with `baton tasks list`');
    expect(missing.stderr).not.toContain('/api/v1');
    const usage = await baton(['tasks', 'move', created.id], 2);
    expect(usage.stderr).toContain("error: missing required argument 'status'");
  });
});

describe('the command line people expect', () => {
  it('pages with --cursor and --all, says on stderr how to see more, and --json carries the next cursor', { timeout: 120_000 }, async () => {
    const made: string[] = [];
    for (const title of ['page one', 'page two', 'page three']) made.push((await json<{ id: string }>(['tasks', 'create', title, '--label', 'paging'])).id);
    const first = await baton(['tasks', 'list', '--label', 'paging', '--limit', '2']);
    expect(first.stdout.trim().split('\n')).toHaveLength(3); // the head and two rows
    const more = /more follow: (baton tasks list --label paging --limit 2 --cursor (\S+)); or --all for every one\)\n$/.exec(first.stderr);
    expect(more, first.stderr).not.toBeNull();
    const rest = await baton(['tasks', 'list', '--label', 'paging', '--limit', '2', '--cursor', more?.[2] ?? '']);
    expect(rest.stdout).toContain(made[0]);
    expect(rest.stderr).toBe('');
    const page = await json<{ data: { id: string }[]; has_more: boolean; next_cursor: string | null }>(['tasks', 'list', '--label', 'paging', '--limit', '2']);
    expect(page).toMatchObject({ has_more: true, next_cursor: more?.[2] });
    const all = await json<{ data: { id: string }[]; has_more: boolean; next_cursor: string | null }>(['tasks', 'list', '--label', 'paging', '--all', '--limit', '1']);
    expect(Object.keys(all).sort()).toEqual(['data', 'has_more', 'next_cursor']);
    expect(all).toMatchObject({ has_more: false, next_cursor: null });
    expect(all.data.map((t) => t.id)).toEqual([...made].reverse());
    await baton(['tasks', 'list', '--all', '--cursor', 'x'], 2);
  });

  it('names a task by a unique prefix of its ULID, lists the candidates of an ambiguous one (exit 2)', { timeout: 120_000 }, async () => {
    // Tasks made moments apart share the ULID's time part; make pairs until two share 6 characters.
    let pair: string[] = [];
    let common = '';
    while (common.length < 6) {
      pair = [(await json<{ id: string }>(['tasks', 'create', 'short id A'])).id, (await json<{ id: string }>(['tasks', 'create', 'short id B'])).id];
      const [a = '', b = ''] = pair.map((id) => id.slice(4));
      common = a.slice(0, [...a].findIndex((c, i) => c !== b[i]));
    }
    const [a = '', b = ''] = pair;
    // The shortest prefix past the shared one that no other task has (tasks of earlier tests may share the time part too).
    const ids = (await json<{ data: { id: string }[] }>(['tasks', 'list', '--all'])).data.map((t) => t.id);
    let length = common.length + 1;
    while (ids.some((id) => id !== a && id.slice(4, 4 + length) === a.slice(4, 4 + length))) length++;
    const unique = a.slice(4, 4 + length).toLowerCase();
    expect((await baton(['tasks', 'show', unique])).stdout).toMatch(new RegExp(`^id\\s+${a}$`, 'm'));
    expect((await json<{ id: string }>(['tasks', 'show', `tsk_${unique}`])).id).toBe(a);
    const ambiguous = await baton(['tasks', 'show', common], 2);
    expect(ambiguous.stderr).toMatch(new RegExp(`^error: tsk_${common} names more than one task: .*${b} \\(short id B\\).*Give more characters of the id\\.\n$`));
    expect(ambiguous.stderr).toContain(`${a} (short id A)`);
    const tooShort = await baton(['tasks', 'show', common.slice(0, 4)], 2);
    expect(tooShort.stderr).toBe(`error: ${common.slice(0, 4)} is too short to name a task: give its id (tsk_…) or at least 6 characters of its ULID.\n`);
    const none = await baton(['tasks', 'show', '000000'], 4);
    expect(none.stderr).toBe('error: No task id starts with tsk_000000.\n');
    // Under --json a failure is the problem document, on stderr.
    const missing = await baton(['tasks', 'show', 'tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--json'], 4);
    const problem = JSON.parse(missing.stderr) as { hint?: unknown };
    expect(problem).toMatchObject({ code: 'not_found', status: 404, retryable: false, exit_code: 4 });
    expect(typeof problem.hint).toBe('string');
    expect(missing.stdout).toBe('');
  });

  it('shows names instead of ids, lists tokens, filters by @me, shows what is ready, and reports and ends the login', { timeout: 180_000 }, async () => {
    const mine = await json<{ id: string }>(['tasks', 'create', 'ready for anyone', '--label', 'ready-view', '-p', 'high']);
    const waiting = await json<{ id: string }>(['tasks', 'create', 'waits on mine', '--label', 'ready-view', '--blocked-by', mine.id]);
    const ready = await json<{ data: { id: string }[] }>(['tasks', 'ready', '--label', 'ready-view']);
    expect(ready.data.map((t) => t.id)).toEqual([mine.id]);
    expect(ready.data.map((t) => t.id)).not.toContain(waiting.id);
    await baton(['tasks', 'claim', mine.id.slice(4, 20)]);
    expect((await json<{ data: unknown[] }>(['tasks', 'ready', '--label', 'ready-view'])).data).toEqual([]);
    // The holder by name, not by id.
    expect((await baton(['tasks', 'list', '--label', 'ready-view'])).stdout).toMatch(new RegExp(`${mine.id}  in_progress\\s+high\\s+ready for anyone\\s+ready-view\\s+admin\\n`));
    expect((await json<{ data: unknown[] }>(['tasks', 'list', '--label', 'ready-view', '--assignee', '@me'])).data).toEqual([]);
    await baton(['tasks', 'comment', mine.id, 'by name']);
    expect((await baton(['tasks', 'comments', mine.id])).stdout).toMatch(/^\S+\s+admin\s+by name$/m);
    expect((await baton(['tasks', 'events', mine.id])).stdout).toMatch(/^\S+\s+task\.created\s+admin\s+tsk_/m);
    // A member, who may not read principals (agents:admin), sees the same names: the directory names them.
    const me = await json<{ principal: { id: string } }>(['whoami']);
    const member = await json<{ id: string }>(['agents', 'create', 'Mia Member', '--role', 'member']);
    const memberToken = (await json<{ token: string }>(['tokens', 'create', member.id, '--machine', 'member-box'])).token;
    const asMember = { XDG_CONFIG_HOME: join(scratch, 'member'), BATON_URL: url, BATON_TOKEN: memberToken };
    expect((await baton(['agents', 'list'], 3, asMember)).stderr).toContain('agents:admin');
    expect((await baton(['tasks', 'list', '--label', 'ready-view'], 0, asMember)).stdout).toMatch(new RegExp(`${mine.id}  in_progress\\s+high\\s+ready for anyone\\s+ready-view\\s+admin\\n`));
    expect((await baton(['tasks', 'comments', mine.id], 0, asMember)).stdout).toMatch(/^\S+\s+admin\s+by name$/m);
    const directory = await baton(['agents', 'directory', member.id, me.principal.id], 0, asMember);
    expect(directory.stdout).toMatch(/^ID\s+NAME\s+KIND\s+HANDLE\s+DISABLED\n/);
    expect(directory.stdout).toMatch(new RegExp(`^${member.id}\\s+Mia Member\\s+human\\s+@Mia_Member\\s*$`, 'm'));
    expect(directory.stdout).toMatch(new RegExp(`^${me.principal.id}\\s+admin\\s+human\\s+@admin\\s*$`, 'm'));
    // By the start of a name, any case, a space as `_`.
    const found = JSON.parse((await baton(['agents', 'directory', '--prefix', 'mia_m', '--json'], 0, asMember)).stdout) as { data: { id: string }[] };
    expect(found.data.map((e) => e.id)).toEqual([member.id]);

    const tokens = await baton(['tokens', 'list']);
    expect(tokens.stdout).toMatch(/^ID\s+MACHINE\s+PREFIX\s+SCOPES\s+LAST USED\s+EXPIRES\s+REVOKED\s+CREATED BY\n/);
    expect(tokens.stdout).toMatch(/^tok_\w+\s+bootstrap/m);
    expect((await json<{ data: { agent_id: string }[] }>(['tokens', 'list', me.principal.id])).data.every((t) => t.agent_id === me.principal.id)).toBe(true);

    const status = await baton(['auth', 'status']);
    expect(status.stdout).toMatch(new RegExp(`^Logged in to ${url} \\(from .+config\\.json\\) as admin \\(human agt_\\w+\\)\ntoken tok_\\w+ on \\S+ \\(from .+config\\.json\\); scopes: `));
    const logout = await baton(['logout']);
    expect(logout.stderr).toMatch(/^Logged out: removed .+config\.json\.\n$/);
    expect((await baton(['auth', 'status'], 3)).stderr).toContain('Not logged in');
    expect((await baton(['logout'])).stderr).toMatch(/^No saved login in /);
    await baton(['login', '--url', url, '--token', adminToken]);
  });
});

describe('the review loop from a shell', () => {
  it('hands in, comments, requests changes, approves, and counts a failed attempt', { timeout: 180_000 }, async () => {
    const agent = await json<{ id: string }>(['agents', 'create', 'shell-bot', '--scope', 'tasks:read,tasks:write,tasks:claim']);
    const { token } = await json<{ token: string }>(['tokens', 'create', agent.id, '--machine', 'shell-box']);
    const asAgent = { BATON_URL: url, BATON_TOKEN: token };
    const task = await json<{ id: string }>(['tasks', 'create', 'Tidy the CLI help', '--label', 'shell-loop']);
    await baton(['tasks', 'claim', '--label', 'shell-loop'], 0, asAgent);

    const handedIn = await baton(['tasks', 'hand-in', task.id, '--summary', 'Help texts tidied.'], 0, asAgent);
    expect(handedIn.stderr).toBe(`${task.id} handed in for review\n`);
    expect(handedIn.stdout).toMatch(/status\s+in_review/);
    expect(handedIn.stdout).toMatch(/^handed in\s+\S+ by shell-bot \(agt_\w+\)\nsummary\s+Help texts tidied\.$/m);
    // The reviewer's inbox names who handed it in rather than giving their id.
    expect((await baton(['inbox', '--kind', 'to_review'])).stdout).toMatch(new RegExp(`^inb_\\w+\\s+to_review\\s+unread\\s+${task.id}\\s+shell-bot\\s+Help texts tidied\\.$`, 'm'));
    expect((await baton(['tasks', 'comment', task.id, 'Nice. @shell-bot one more thing.'])).stderr).toMatch(/^commented cmt_\w+ on tsk_\w+\n$/);
    // Requesting changes needs the feedback: a one-line problem, then the task goes back to its agent.
    expect((await baton(['tasks', 'review', task.id, 'request-changes'], 2)).stderr).toBe('error: request-changes needs --comment saying what to change\n');
    const back = await baton(['tasks', 'review', task.id, 'request-changes', '-c', "Add an example to review's help."]);
    expect(back.stderr).toBe(`${task.id} sent back: in_progress\n`);
    const comments = (await baton(['tasks', 'comments', task.id], 0, asAgent)).stdout.split('\n');
    expect(comments[0]).toMatch(/^TIME\s+BY\s+COMMENT$/);
    expect(comments.slice(1, 3).map((line) => line.replace(/^\S+\s+\S+\s+/, ''))).toEqual(['Nice. @shell-bot one more thing.', "Add an example to review's help."]);

    await baton(['tasks', 'hand-in', task.id, '-s', 'Example added.'], 0, asAgent);
    expect((await baton(['tasks', 'review', task.id, 'approve'])).stderr).toBe(`${task.id} approved: done\n`);

    // A failed attempt is counted, and `show` says so.
    const flaky = await json<{ id: string }>(['tasks', 'create', 'Sync the mirror', '--label', 'shell-fail']);
    await baton(['tasks', 'claim', flaky.id], 0, asAgent);
    await baton(['tasks', 'release', flaky.id, '--failed', 'The mirror timed out.'], 0, asAgent);
    expect((await baton(['tasks', 'show', flaky.id])).stdout).toMatch(/attempts\s+1 failed \(limit/);
  });
});

describe('baton agents, tokens, workspaces and approvals', () => {
  it('creates an agent and its token, revokes it, and decides the approvals its gated calls ask for', { timeout: 120_000 }, async () => {
    const agent = await json<{ id: string }>(['agents', 'create', 'cli-bot', '--scope', 'tasks:read,tasks:write']);
    expect((await baton(['agents', 'list'])).stdout).toMatch(new RegExp(`${agent.id}\\s+cli-bot\\s+agent\\s+tasks:read,tasks:write`));
    // A human gets a role's scopes (and an invitation, with --email) in place of --scope; saying neither is a usage error.
    const person = await json<{ id: string; kind: string; role: string; scopes: string[] }>(['agents', 'create', 'Ana Lima', '--role', 'viewer', '--email', 'ana@example.com']);
    expect(person).toMatchObject({ kind: 'human', role: 'viewer', scopes: ['tasks:read', 'events:read'] });
    expect((await baton(['agents', 'list'])).stdout).toMatch(new RegExp(`Ana Lima\\s+human\\s+viewer\\s+tasks:read,events:read`));
    expect((await baton(['agents', 'create', 'nobody'], 2)).stderr).toBe('error: Say what it may do: --scope (repeatable), or for a human --role.\n');
    // A lead promotes a person, and disables one who left (their sessions and tokens stop), then enables them again.
    const personId = person.id;
    expect((await baton(['agents', 'set-role', personId, 'admin'])).stdout).toMatch(/^Ana Lima \(agt_\w+\) is now admin: .*agents:admin/);
    expect((await baton(['agents', 'set-role', personId, 'boss'], 2)).stderr).toContain('Allowed choices are owner, admin, member, viewer.');
    expect((await baton(['agents', 'disable', personId])).stdout).toBe(`Ana Lima (${personId}) is disabled\n`);
    expect((await baton(['agents', 'list'])).stdout).toMatch(new RegExp(`${personId}\\s+Ana Lima\\s+human\\s+admin\\s+\\S+\\s+yes`));
    expect((await baton(['agents', 'enable', personId])).stdout).toBe(`Ana Lima (${personId}) is enabled\n`);
    const made = await baton(['agents', 'create', 'docs-bot', '--scope', 'tasks:read']);
    expect(made.stderr).toMatch(/^Next, its token for each machine it runs on: baton tokens create agt_\w+ --machine <name>\n$/);
    const token = await json<{ id: string; token: string }>(['tokens', 'create', agent.id, '--machine', 'cli-test']);
    const asBot = { BATON_URL: url, BATON_TOKEN: token.token };
    expect((await baton(['whoami'], 0, asBot)).stdout).toContain(`cli-bot (agent ${agent.id})`);

    // Who a task is for: named on create, then the caller (me), then nobody.
    expect((await baton(['tasks', 'create', 'also for the bot', '--assignee', agent.id])).stdout).toMatch(new RegExp(`^assignee\\s+cli-bot \\(${agent.id}\\)$`, 'm'));
    const forBot = await json<{ id: string }>(['tasks', 'create', 'for the bot', '--assignee', agent.id]);
    expect((await json<{ assignee?: { id: string } | null }>(['tasks', 'show', forBot.id])).assignee?.id).toBe(agent.id);
    const me = await json<{ principal: { id: string } }>(['whoami']);
    expect((await json<{ assignee?: { id: string } | null }>(['tasks', 'assign', forBot.id, 'me'])).assignee?.id).toBe(me.principal.id);
    const unassigned = await baton(['tasks', 'assign', forBot.id, 'none']);
    expect(unassigned.stderr).toContain(`${forBot.id} unassigned`);
    expect(unassigned.stdout).not.toMatch(/^assignee/m);
    // By name and id for any token that reads tasks (the directory names them), by id where it may not (none here).
    expect((await baton(['tasks', 'assign', forBot.id, agent.id])).stdout).toMatch(new RegExp(`^assignee\\s+cli-bot \\(${agent.id}\\)$`, 'm'));
    expect((await baton(['tasks', 'show', forBot.id], 0, asBot)).stdout).toMatch(new RegExp(`^assignee\\s+cli-bot \\(${agent.id}\\)$`, 'm'));

    // An agent's delete waits for a human: two of them, one approved and one denied.
    const pending: string[] = [];
    for (const title of ['delete me', 'keep me']) {
      const task = await json<{ id: string }>(['tasks', 'create', title]);
      const res = await fetch(`${url}/api/v1/tasks/${task.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token.token}`, 'idempotency-key': crypto.randomUUID() } });
      expect(res.status).toBe(202);
      pending.push(((await res.json()) as { id: string }).id);
    }
    const listed = (await baton(['approvals', 'list', '--status', 'pending'])).stdout;
    for (const id of pending) expect(listed).toMatch(new RegExp(`${id}\\s+pending\\s+tasks[._]delete`));
    // The target by its title and the requester by name, not by id.
    expect(listed).toMatch(new RegExp(`${pending[0]}\\s+pending\\s+tasks[._]delete\\s+delete me\\s+cli-bot\\s`));
    const agentsPage = await json<{ data: unknown[]; has_more: boolean; next_cursor: string | null }>(['agents', 'list', '--limit', '1']);
    expect(agentsPage.data).toHaveLength(1);
    expect(agentsPage.has_more).toBe(true);
    expect((await baton(['agents', 'list', '--limit', '1'])).stderr).toMatch(/more follow: baton agents list --limit 1 --cursor \S+; or --all/);
    expect((await baton(['approvals', 'approve', pending[0] ?? ''])).stdout).toBe(`${pending[0]} is approved (the operation answered 200)\n`);
    expect((await baton(['approvals', 'deny', pending[1] ?? '', '--reason', 'still needed'])).stdout).toBe(`${pending[1]} is denied\n`);

    expect((await baton(['tokens', 'revoke', token.id])).stdout).toBe(`revoked ${token.id} (cli-test)\n`);
    const refused = await baton(['whoami'], 3, asBot);
    expect(refused.stderr).toMatch(/\(invalid_token, HTTP 401\)/);
  });

  it("lists your workspaces and creates one, printing its owner's token once", { timeout: 120_000 }, async () => {
    const made = await baton(['workspaces', 'create', 'CLI Beta']);
    const [line, token = ''] = made.stdout.trim().split('\n');
    expect(line).toMatch(/^created workspace wsp_\w+ \(CLI Beta\); you are its owner agt_\w+$/);
    expect(token).toMatch(/^bat_\w+$/);
    expect(made.stderr).toMatch(/^Warning: this token is its owner's, every right in CLI Beta, shown once; store it now/);
    expect((await baton(['workspaces', 'list'])).stdout).toMatch(/^wsp_0{26}\s+default\s+yes\s/m);
    const asOwner = { BATON_URL: url, BATON_TOKEN: token };
    expect((await baton(['workspaces', 'list'], 0, asOwner)).stdout).toMatch(/^wsp_\w+\s+CLI Beta\s+yes\s/m);
    const listed = JSON.parse((await baton(['workspaces', 'list', '--json'], 0, asOwner)).stdout) as { data: { name: string; current: boolean }[] };
    expect(listed.data).toEqual([expect.objectContaining({ name: 'CLI Beta', current: true })]);
    expect((await baton(['tasks', 'list'], 0, asOwner)).stdout).not.toMatch(/cli-bot|delete me/);
    // A workspace budget takes no --target: it is its own workspace's.
    const budget = JSON.parse((await baton(['budgets', 'create', 'all of Beta', '--applies-to', 'workspace', '--unit', 'runs', '--limit', '100', '--json'], 0, asOwner)).stdout) as { applies_to: string; target: string };
    expect(`${budget.applies_to} ${budget.target}`).toMatch(/^workspace wsp_\w+$/);
    expect((await baton(['budgets', 'list', '--applies-to', 'workspace'], 0, asOwner)).stdout).toMatch(new RegExp(`all of Beta\\s+workspace ${budget.target}\\s+month\\s`));
    expect((await baton(['budgets', 'list', '--applies-to', 'workspace'])).stdout).not.toContain('all of Beta');
    // Names are the server's to keep unique.
    expect((await baton(['workspaces', 'create', 'CLI Beta'], 5)).stderr).toMatch(/\(conflict_state, HTTP 409\)/);
  });

  it("shows and changes the workspace's settings; `default` puts one back to the server's", { timeout: 120_000 }, async () => {
    const asAdmin = { BATON_URL: url, BATON_TOKEN: adminToken };
    const json = async <T>(args: string[]) => JSON.parse((await baton([...args, '--json'], 0, asAdmin)).stdout) as T;
    expect((await baton(['workspaces', 'settings'], 0, asAdmin)).stdout).toMatch(/^event_retention_days\s+default\s+none$/m);
    const changed = await baton(['workspaces', 'update', '--escalate-ask', '2h', '--escalate-to', 'role:admin,role:owner', '--event-retention-days', '30'], 0, asAdmin);
    expect(changed.stdout).toMatch(/^escalate_ask_s\s+7200\s+7200$/m);
    expect(changed.stdout).toMatch(/^escalate_to\s+role:admin,role:owner\s+role:admin,role:owner$/m);
    expect(changed.stdout).toMatch(/^event_retention_days\s+30\s+30$/m);
    const answer = await json<{ settings: Record<string, unknown> }>(['workspaces', 'update', '--escalate-ask', 'default']);
    expect(answer.settings).toMatchObject({ escalate_ask_s: null, escalate_to: ['role:admin', 'role:owner'], event_retention_days: 30 });
    expect((await baton(['workspaces', 'update'], 2, asAdmin)).stderr).toMatch(/Name at least one setting/);
    expect((await baton(['workspaces', 'update', '--escalate-review', 'soon'], 2, asAdmin)).stderr).toMatch(/--escalate-review must be a duration/);
    expect((await baton(['workspaces', 'update', '--event-retention-days', '0'], 6, asAdmin)).stderr).toMatch(/validation_failed/);
    await baton(['workspaces', 'update', '--escalate-to', 'none', '--event-retention-days', 'default'], 0, asAdmin);
  });

  it('sets up recurring work: creates a schedule, lists it with its next run, pauses, resumes and deletes it', { timeout: 120_000 }, async () => {
    const made = await baton(['schedules', 'create', 'Weekly triage', '--cron', '0 9 * * 1', '--time-zone', 'Europe/Berlin', '--title', 'Triage the inbox', '--label', 'ops']);
    expect(made.stdout).toMatch(/^created schedule sch_\w+ \(Weekly triage\): task "Triage the inbox" at 0 9 \* \* 1 Europe\/Berlin; next \S+Z/);
    const id = /sch_\w+/.exec(made.stdout)?.[0] ?? '';
    expect((await baton(['schedules', 'list'])).stdout).toMatch(new RegExp(`${id}\\s+Weekly triage\\s+0 9 \\* \\* 1\\s+Europe/Berlin\\s+task "Triage the inbox"\\s+\\S+Z\\s+on`));
    expect((await baton(['schedules', 'pause', id])).stdout).toBe(`${id} (Weekly triage) is paused\n`);
    expect((await baton(['schedules', 'resume', id])).stdout).toMatch(new RegExp(`^${id} \\(Weekly triage\\) is on; next \\S+Z`));
    expect((await baton(['schedules', 'create', 'Nothing', '--cron', '0 9 * * 1'], 2)).stderr).toContain('--title for a task, or --template');
    expect((await baton(['schedules', 'create', 'Bad', '--cron', 'every monday', '--title', 'x'], 6)).stderr).toContain('Give five fields');
    expect((await baton(['schedules', 'delete', id])).stdout).toBe(`deleted schedule ${id}\n`);
  });

  it('rotates a token for the same machine: the new one works at once and the old one through --grace', { timeout: 120_000 }, async () => {
    const agent = await json<{ id: string }>(['agents', 'create', 'rotating-bot', '--scope', 'tasks:read']);
    const old = await json<{ id: string; token: string }>(['tokens', 'create', agent.id, '--machine', 'rotating-box']);
    const rotated = await baton(['tokens', 'rotate', old.id, '--grace', '10m']);
    const fresh = rotated.stdout.trim();
    expect(fresh).toMatch(/^bat_\w+$/);
    expect(rotated.stderr).toMatch(new RegExp(`^token tok_\\w+ replaces ${old.id} on rotating-box; the old one works until \\S+Z \\(shown once; store it now\\):\n$`));
    for (const t of [old.token, fresh]) expect((await baton(['whoami'], 0, { BATON_URL: url, BATON_TOKEN: t })).stdout).toContain('rotating-bot');
    // Without a grace the replaced one stops at once; --json carries the new token and the replaced one.
    const again = await json<{ token: string; machine: string; replaced: { revoked_at: string } }>(['tokens', 'rotate', (await json<{ data: { id: string; revoked_at: string | null }[] }>(['tokens', 'list', agent.id])).data.find((t) => t.revoked_at === null)?.id ?? '']);
    expect(again.machine).toBe('rotating-box');
    expect((await baton(['whoami'], 3, { BATON_URL: url, BATON_TOKEN: fresh })).stderr).toMatch(/\(invalid_token, HTTP 401\)/);
    expect((await baton(['whoami'], 0, { BATON_URL: url, BATON_TOKEN: again.token })).stdout).toContain('rotating-bot');
    expect((await baton(['tokens', 'rotate', old.id, '--grace', 'soon'], 2)).stderr).toContain('--grace must be a duration such as 90s, 10m, 2h or 1d, got "soon"');
  });
});

describe('baton tasks watch and baton admin-token', () => {
  it('follows events across a server restart, missing nothing, while admin-token mints a token with the server down', { timeout: 240_000 }, async () => {
    // From the newest event on, so what the test does next is after the watch's starting point.
    const newest = (await (await fetch(`${url}/api/v1/events?order=desc&limit=1`, { headers: { authorization: `Bearer ${adminToken}` } })).json()) as { data: { id: string }[] };
    const watch = startBaton(['tasks', 'watch', '--json', '--since', newest.data[0]?.id ?? ''], cliEnv);
    try {
      const before = await json<{ id: string }>(['tasks', 'create', 'seen before the restart']);
      await watch.printed(new RegExp(`"subject":"${before.id}"`));

      await stopServer();
      // The bootstrap token is lost: mint another straight in the database (the server is down, as PGlite needs).
      const minted = await runBaton(['admin-token'], serverEnv);
      expect(minted.code, minted.stderr).toBe(0);
      const newToken = minted.stdout.trim();
      expect(newToken).toMatch(/^bat_\w+$/);
      expect(minted.stderr).toMatch(/^New admin token tok_\w+ for admin \(agt_\w+\); a token\.created event by the system records it\. Shown once:\n$/);

      await startServer();
      const after = await json<{ id: string }>(['tasks', 'create', 'seen after the restart']);
      // The token minted while the watch was disconnected arrives too: it resumed from its last event.
      const recovery = await watch.printed(/\{[^\n]*"type":"token\.created"[^\n]*"recovery":true[^\n]*\}/);
      const event = JSON.parse(recovery[0]) as { actor: { kind: string }; data: { machine: string; via: string } };
      expect(event.actor.kind).toBe('system');
      expect(event.data.via).toBe('baton admin-token');
      expect(event.data.machine).toMatch(/^admin-token-/);
      await watch.printed(new RegExp(`"subject":"${after.id}"`));
      const lines = watch.output().trim().split('\n');
      expect(lines.filter((l) => l.includes(`"subject":"${before.id}"`) && l.includes('task.created'))).toHaveLength(1);

      // The new token works: log in with it.
      expect((await baton(['login', '--url', url, '--token', newToken])).stdout).toContain('as admin (human');
    } finally {
      watch.child.kill('SIGINT');
      await watch.outcome;
    }
    expect((await watch.outcome).stderr).toMatch(/connection lost \(.+\); reconnecting in \d+\.\d s/);
  });
});

describe('baton wait, inbox and answer', () => {
  it('wait exits 8 when nothing came, then prints an ask from the cursor on; answer answers it once', { timeout: 120_000 }, async () => {
    await baton(['login', '--url', url, '--token', adminToken]);
    const cursorFile = join(scratch, 'wait-cursor');
    await baton(['wait', '--cursor-file', cursorFile, '--timeout', '0', '--no-work'], 8);
    const api = (path: string, body: unknown) =>
      fetch(`${url}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ id: string }>);
    const task = await api('/tasks', { title: 'Asked from the CLI test' });
    const ask = await api(`/tasks/${task.id}/asks`, { question: 'Ship?', options: [{ label: 'yes' }, { label: 'no' }], to: 'admin', timeout_s: 600, default: { option: 'no' } });
    const woke = JSON.parse((await baton(['wait', '--cursor-file', cursorFile, '--timeout', '5s', '--no-work', '--json'])).stdout) as { items: { type: string; data: { ask_id: string } }[] };
    expect(woke.items).toEqual([expect.objectContaining({ type: 'ask.created', data: expect.objectContaining({ ask_id: ask.id }) as unknown })]);
    await baton(['wait', '--cursor-file', cursorFile, '--timeout', '0', '--no-work'], 8);
    const answered = JSON.parse((await baton(['answer', ask.id, 'yes', '--json'])).stdout) as { status: string; answer: { option: string } };
    expect(answered).toMatchObject({ status: 'answered', answer: { option: 'yes' } });
    const again = await baton(['answer', ask.id, 'no'], 5);
    expect(again.stderr).toContain('ask_closed');
    expect((await baton(['inbox', '--json'])).stdout).toContain('"counts"');
  });
});

describe('baton runs', () => {
  it("tail prints a run's log, follows it live, and exits when the run is handed in; list and show read it", { timeout: 120_000 }, async () => {
    await baton(['login', '--url', url, '--token', adminToken]);
    const api = async <T>(path: string, body: unknown) => {
      const response = await fetch(`${url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify(body),
      });
      expect(response.ok, await response.clone().text()).toBe(true);
      return (await response.json()) as T;
    };
    const task = await api<{ id: string }>('/tasks', { title: 'Tailed from the CLI test' });
    const { lease } = await api<{ lease: { id: string; epoch: number } }>(`/tasks/${task.id}/claim`, {});
    await api(`/leases/${lease.id}/log`, { lines: ['cloning the repository', 'running the suite'] });
    await api(`/leases/${lease.id}/usage`, { input_tokens: 1200, output_tokens: 300, cost: 0.42, model: 'test-model' });

    // By task id: its latest run. The lines so far, then what is appended while it follows.
    const tail = startBaton(['runs', 'tail', task.id], cliEnv);
    await tail.printed(/running the suite/);
    await api(`/leases/${lease.id}/log`, { lines: ['3 failures'], level: 'warn' });
    await tail.printed(/warn\s+3 failures/);
    await api(`/tasks/${task.id}/hand_in`, { summary: 'fixed', lease_epoch: lease.epoch });
    const ended = await tail.outcome;
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout.split('\n').filter((line) => /^\d\d:\d\d:\d\d /.test(line)).map((line) => line.slice(9))).toEqual([
      'info  cloning the repository',
      'info  running the suite',
      'warn  3 failures',
    ]);
    expect(ended.stderr).toContain(`run ${lease.id} ended`);

    const listed = await json<{ data: { id: string; usage: { cost: number } }[] }>(['runs', 'list', '--task', task.id]);
    expect(listed.data).toEqual([expect.objectContaining({ id: lease.id, usage: expect.objectContaining({ cost: 0.42 }) as unknown })]);
    const shown = (await baton(['runs', 'show', lease.id, '--lines', '1'])).stdout;
    expect(shown).toContain('usage: 1200 in, 300 out, 0 tool calls, 0.42 USD (test-model)');
    expect(shown).toMatch(/warn\s+3 failures/);
    expect(shown).not.toContain('running the suite');
    // A task nobody claimed has no run: exit 4.
    const unclaimed = await api<{ id: string }>('/tasks', { title: 'never claimed' });
    expect((await baton(['runs', 'tail', unclaimed.id], 4)).stderr).toContain('has no run yet');
  });
});
