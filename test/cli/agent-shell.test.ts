import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Principal, type TestServer } from '../harness.ts';
import { type ListeningCli, listeningCli } from './listening-cli.ts';

/**
 * What an agent that works from a shell needs beyond tasks (`baton artifacts`, `baton asks`,
 * `baton reservations`, `baton runs usage|log`), through the real `baton` binary against a
 * listening server: a report uploaded and handed in by id, a question to a person whose answer the
 * agent waits for and reads off stdout, paths reserved so others keep off them, and what a run
 * spent, which its budget then refuses the next claim on.
 */

let t: TestServer;
let cli: ListeningCli;
let scratch: string;
let agent: Principal;
let other: Principal;
let human: Principal;

beforeAll(async () => {
  t = await startTestServer();
  cli = await listeningCli(t);
  scratch = await mkdtemp(join(tmpdir(), 'baton-agent-shell-'));
  agent = await t.addPrincipal({ kind: 'agent', name: 'shell-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'artifacts:write'] });
  other = await t.addPrincipal({ kind: 'agent', name: 'other-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  human = await t.addPrincipal({ kind: 'human', name: 'dana', scopes: ['tasks:read', 'tasks:write', 'tasks:review'] });
}, 120_000);
afterAll(async () => {
  await t.close();
  await cli.close();
  await rm(scratch, { recursive: true, force: true });
});

/** `baton …args` as `who`; fails the test with its output unless it exits `expected`. */
const baton = (who: Principal, args: string[], expected = 0) => cli.baton(who.token, args, expected);
const newTask = (title: string) => cli.newTask(title);

describe('baton artifacts', () => {
  it('uploads a report (text) and a binary file, hands the report in by id, and downloads both byte for byte', { timeout: 120_000 }, async () => {
    const taskId = await newTask('write the report');
    await baton(agent, ['tasks', 'claim', taskId]);
    const report = join(scratch, 'report.md');
    await writeFile(report, '# Report\n\nAll green — 12 tests fixed.\n');
    const uploaded = await baton(agent, ['artifacts', 'upload', report, '--task', taskId]);
    const reportId = uploaded.stdout.trim();
    expect(reportId).toMatch(/^art_[0-9A-Z]{26}$/);
    expect(uploaded.stderr).toContain(`${reportId} report.md: text/markdown, ${Buffer.byteLength('# Report\n\nAll green — 12 tests fixed.\n')} bytes, on ${taskId}`);

    const binary = randomBytes(4096);
    binary[0] = 0xff; // never valid UTF-8: it must travel as base64
    await writeFile(join(scratch, 'trace.bin'), binary);
    expect((await baton(agent, ['artifacts', 'upload', join(scratch, 'missing.md')], 2)).stderr).toContain('missing.md: no such file');
    const blobId = (await baton(agent, ['artifacts', 'upload', join(scratch, 'trace.bin'), '--name', 'trace']).then((r) => r.stdout)).trim();

    await baton(agent, ['tasks', 'hand-in', taskId, '--summary', 'Fixed; see the report', '--artifact', reportId]);
    const task = await t.request('GET', `/api/v1/tasks/${taskId}?view=full`, { token: t.adminToken });
    expect(task.json<{ status: string; handoff: { artifacts: string[] } }>()).toMatchObject({ status: 'in_review', handoff: { artifacts: [reportId] } });
    // The task shows its artifact by file name, with the id to download it by.
    expect((await baton(human, ['tasks', 'show', taskId])).stdout).toMatch(new RegExp(`^artifacts\\s+report\\.md \\(${reportId}\\), text/markdown, ${Buffer.byteLength('# Report\n\nAll green — 12 tests fixed.\n')} bytes$`, 'm'));

    const shown = JSON.parse((await baton(human, ['artifacts', 'show', blobId, '--json'])).stdout) as { name: string; content_type: string; size: number };
    expect(shown).toMatchObject({ name: 'trace', content_type: 'application/octet-stream', size: 4096 });
    await baton(human, ['artifacts', 'download', blobId, '-o', join(scratch, 'trace.out')]);
    expect((await readFile(join(scratch, 'trace.out'))).equals(binary)).toBe(true);
    expect((await baton(human, ['artifacts', 'download', reportId])).stdout).toBe('# Report\n\nAll green — 12 tests fixed.\n');
  });
});

describe('baton asks', () => {
  it('asks a person and waits: the answer alone is printed once they choose an option', { timeout: 120_000 }, async () => {
    const taskId = await newTask('release 2.0');
    await baton(agent, ['tasks', 'claim', taskId]);
    const asking = cli.start(agent.token, ['asks', 'create', taskId, 'Ship 2.0 today?', '--to', 'dana', '--option', 'yes', '--option', 'no', '--due', '30m', '--default', 'no', '--wait', '10m']);
    // The person sees it among the open asks addressed to them, and answers from their shell.
    let askId = '';
    for (let i = 0; i < 100 && askId === ''; i++) {
      const listed = JSON.parse((await baton(human, ['asks', 'list', '--json'])).stdout) as { data: { id: string; task_id: string }[] };
      askId = listed.data.find((a) => a.task_id === taskId)?.id ?? '';
    }
    expect(askId).toMatch(/^ask_/);
    await baton(human, ['answer', askId, 'yes']);
    const waited = await asking.outcome;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toBe('yes\n');
    expect(waited.stderr).toContain(`${askId} answered by ${human.id}`);
  });

  it('prints the id of an ask made without --wait; show --wait exits 8 while it is open; its asker cancels it', { timeout: 120_000 }, async () => {
    const taskId = await newTask('rename the flag');
    const created = await baton(agent, ['asks', 'create', taskId.slice(4, 14), 'Which name?', '--to', human.id, '--due', '2h', '--default', 'keep the old one']);
    const askId = created.stdout.trim();
    expect(askId).toMatch(/^ask_[0-9A-Z]{26}$/);
    expect(created.stderr).toContain(`baton asks show ${askId} --wait 10m`);

    const open = await baton(agent, ['asks', 'show', askId, '--wait', '0'], 8);
    expect(open.stderr).toContain('is still open');
    const mine = await baton(agent, ['asks', 'list', '--mine']);
    expect(mine.stdout).toContain(askId);
    // An agent without agents:admin reads names too, through the directory.
    expect(mine.stdout).toMatch(/open\s+dana\s+shell-bot/);
    expect(mine.stdout).not.toContain(human.id);
    await baton(agent, ['asks', 'cancel', askId]);
    const shown = JSON.parse((await baton(agent, ['asks', 'show', askId, '--json'])).stdout) as { status: string };
    expect(shown.status).toBe('cancelled');
    const refused = await baton(agent, ['asks', 'create', taskId, 'Again?', '--to', 'dana', '--due', 'soon', '--default', 'no'], 6);
    expect(refused.stderr).toContain('validation_failed');
  });
});

describe('baton reservations', () => {
  it('reserves paths, refuses them to another agent (exit 5, naming the holder), lists, renews and releases them', { timeout: 120_000 }, async () => {
    const repo = 'github.com/acme/shell';
    const held = await baton(agent, ['reservations', 'acquire', '--repo', repo, '--path', 'src/**', '--path', 'docs/*.md', '--ttl', '10m']);
    const id = held.stdout.trim();
    expect(id).toMatch(/^res_[0-9A-Z]{26}$/);
    expect(held.stderr).toContain(`reserved ${repo}: src/**, docs/*.md (exclusive) until`);

    const refused = await baton(other, ['reservations', 'acquire', '--repo', repo, '--path', 'src/parser.ts'], 5);
    expect(refused.stderr).toContain('reservation_conflict');
    expect(refused.stderr).toContain(agent.id);

    const listed = await baton(other, ['reservations', 'list', '--repo', repo]);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+${repo.replace(/\./g, '\\.')}: src/\\*\\*, docs/\\*\\.md\\s+exclusive`));
    const mine = JSON.parse((await baton(agent, ['reservations', 'list', '--holder', '@me', '--json'])).stdout) as { data: { id: string }[] };
    expect(mine.data.map((r) => r.id)).toEqual([id]);

    const renewed = await baton(agent, ['reservations', 'heartbeat', id, '--ttl', '1h']);
    expect(renewed.stderr).toContain(`renewed ${id} until`);
    await baton(other, ['reservations', 'release', id], 3);
    await baton(agent, ['reservations', 'release', id]);
    await baton(other, ['reservations', 'acquire', '--repo', repo, '--path', 'src/parser.ts']);
    await baton(other, ['reservations', 'acquire', '--repo', repo], 2);
  });
});

describe('baton runs usage and log', () => {
  it("reports a run's spend, which caps the next claim, and appends its log from arguments and a pipe", { timeout: 120_000 }, async () => {
    const spender = await t.addPrincipal({ kind: 'agent', name: 'spender-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const budget = await t.request('POST', '/api/v1/budgets', { token: t.adminToken, body: { name: 'spender cap', applies_to: 'agent', target: spender.id, unit: 'cost', limit: 1, period: 'day' } });
    expect(budget.status, budget.body).toBe(201);
    const taskId = await newTask('summarise the logs');
    await newTask('the next one');
    await baton(spender, ['tasks', 'claim', taskId]);

    const reported = await baton(spender, ['runs', 'usage', taskId, '--input-tokens', '1200', '--output-tokens', '300', '--cost', '1.25', '--model', 'some-model', '--tool-calls', '4']);
    expect(reported.stderr).toContain('1500 tokens, 1.25 USD, 4 tool calls');
    // A heartbeat carries a report too, in the same call.
    await baton(spender, ['tasks', 'heartbeat', taskId, '--note', 'halfway', '--output-tokens', '100', '--cost', '0.25']);
    await baton(spender, ['runs', 'log', taskId, 'read 3 files', 'found the cause'], 0);
    const piped = await runPiped(spender, ['runs', 'log', taskId, '--level', 'warn'], `one\n\n${'x'.repeat(2500)}\n`);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toContain('appended 3 line(s)');
    const run = JSON.parse((await baton(spender, ['runs', 'show', taskId, '--json'])).stdout) as { log: { line: string; level: string }[]; usage: { cost: number } };
    expect(run.usage.cost).toBe(1.5);
    expect(run.log.map((l) => [l.level, l.line.length])).toEqual([['info', 12], ['info', 15], ['warn', 3], ['warn', 2000], ['warn', 500]]);

    await baton(spender, ['tasks', 'hand-in', taskId, '--summary', 'done']);
    const refused = await baton(spender, ['tasks', 'claim'], 5);
    expect(refused.stderr).toContain('budget_exhausted');
  });
});

/** `baton …args` as `who` with `input` piped to its standard input. */
async function runPiped(who: Principal, args: string[], input: string) {
  const started = cli.start(who.token, args, 'pipe');
  started.child.stdin?.end(input);
  return started.outcome;
}
