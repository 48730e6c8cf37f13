import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runNode } from '../cli/run-baton.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { listen } from '../mcp/clients.ts';
import { fetchDocument } from './openapi-document.ts';

/**
 * A client generated from the served document with openapi-typescript + openapi-fetch, as a user
 * would make one, and the agent loop written on it: compiled with `strict` (no `!`, no casts, no `??`),
 * then run against the server.
 */
const LOOP = fileURLToPath(new URL('../../docs/examples/openapi-client/agent-loop.ts', import.meta.url));
/** The same on /api/v2's document, following the claimed task's v2 next_actions. */
const LOOP_V2 = fileURLToPath(new URL('../../docs/examples/openapi-client/agent-loop-v2.ts', import.meta.url));
// Under the repository (so openapi-fetch resolves) and outside node_modules (where Node strips no types); scratch/ is ignored.
const SCRATCH = fileURLToPath(new URL('../../scratch/', import.meta.url));

let t: TestServer;
let dir: string;
let baseUrl: string | undefined;
/** The server's URL, listening from the first run on. */
const url = async () => (baseUrl ??= await listen(t));
beforeAll(async () => {
  t = await startTestServer();
  await mkdir(SCRATCH, { recursive: true });
  dir = await mkdtemp(join(SCRATCH, 'openapi-client-'));
  const types = astToString(await openapiTS(structuredClone(await fetchDocument(t)) as never));
  await writeFile(join(dir, 'baton-api.ts'), types);
  await copyFile(LOOP, join(dir, 'agent-loop.ts'));
  const v2 = (await t.request('GET', '/api/v2/openapi.json', { token: null })).json();
  await writeFile(join(dir, 'baton-api-v2.ts'), astToString(await openapiTS(v2 as never)));
  await copyFile(LOOP_V2, join(dir, 'agent-loop-v2.ts'));
}, 60_000);
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

it('compiles the agent loops (v1, v2) on the generated clients with tsc --strict, the generated files included', () => {
  const program = ts.createProgram([join(dir, 'agent-loop.ts'), join(dir, 'agent-loop-v2.ts')], {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2024,
    lib: ['lib.es2024.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    types: ['node'],
    typeRoots: [fileURLToPath(new URL('../../node_modules/@types', import.meta.url))],
    skipLibCheck: true,
  });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const text = ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' });
  expect(text).toBe('');
  expect(program.getSourceFile(join(dir, 'baton-api.ts'))).toBeDefined();
  expect(program.getSourceFile(join(dir, 'baton-api-v2.ts'))).toBeDefined();
}, 60_000);

it('needs no `!`, no cast and no `??` in the loops: what they read is required in the generated types', async () => {
  for (const file of [LOOP, LOOP_V2]) {
    const code = (await readFile(file, 'utf8')).replace(/\/\/.*$/gm, '');
    expect(code).not.toMatch(/[\w)\]]!(?!=)/); // a non-null assertion
    expect(code).not.toMatch(/\bas\s+[A-Za-z{[(]|<[A-Z]\w*>\s*[\w(]/); // a cast
    expect(code).not.toContain('??');
  }
  const loop = (await readFile(LOOP, 'utf8')).replace(/\/\/.*$/gm, '');
  for (const read of ['task.description', 'task.next_actions', 'task.labels', 'lease.epoch', 'manifest.data.next_actions']) expect(loop, read).toContain(read);
  const types = await readFile(join(dir, 'baton-api.ts'), 'utf8');
  // The task in a claim's answer, in its named schema: what the loop reads is not optional.
  const claimed = /\n {8}ClaimedTask: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? '';
  for (const field of ['id', 'title', 'description', 'status', 'labels', 'version', 'lease', 'next_actions']) expect(claimed, field).toMatch(new RegExp(`\\n\\s*${field}: `));
  const lease = /\n {8}Lease: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? '';
  expect(lease).toMatch(/\n\s*epoch: number;/);
});

it('runs the loop against the server: every docs task goes to review', { timeout: 120_000 }, async () => {
  const ids: string[] = [];
  for (const title of ['generate the client', 'check the client']) {
    ids.push((await t.request('POST', '/api/v1/tasks', { body: { title, labels: ['docs'] } })).json<{ id: string }>().id);
  }
  const { code, stdout, stderr } = await runNode([join(dir, 'agent-loop.ts')], { BATON_URL: await url(), BATON_TOKEN: t.adminToken });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(stdout).toMatch(/working as agt_\w+; to start: POST \/api\/v1\/tasks\/claim/);
  expect(stdout).toContain('[docs] generate the client');
  for (const id of ids) expect(stdout).toContain(`in_review: ${id}`);
});

it('runs the v2 loop against the server: it follows each task\'s next_actions to review', { timeout: 120_000 }, async () => {
  const id = (await t.request('POST', '/api/v1/tasks', { body: { title: 'follow v2 next actions', labels: ['docs-v2'] } })).json<{ id: string }>().id;
  const { code, stdout, stderr } = await runNode([join(dir, 'agent-loop-v2.ts')], { BATON_URL: await url(), BATON_TOKEN: t.adminToken });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(stdout).toMatch(/working as agt_\w+; to start: tasks_claim_next/);
  expect(stdout).toContain(`in_review: ${id} follow v2 next actions`);
});
