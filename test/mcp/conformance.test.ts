import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { listen } from './clients.ts';

const CONFORMANCE = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));

let t: TestServer;
let proxy: Server;
let proxyUrl: string;
let workDir: string;
beforeAll(async () => {
  t = await startTestServer();
  const target = new URL(await listen(t));
  // The conformance client sends no credentials; this stands in for an MCP host configured with a
  // token: it adds the bearer header and forwards everything else (Host and Origin included) as is.
  proxy = createServer((req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${t.adminToken}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  workDir = await mkdtemp(join(tmpdir(), 'baton-conformance-'));
});
afterAll(async () => {
  proxy.close();
  await t.close();
  await rm(workDir, { recursive: true, force: true });
});

/** Scenarios that apply to Baton's /mcp: each must pass. */
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list', 'dns-rebinding-protection'];

/**
 * Scenarios of the active suite that do not apply, and why. They are the baseline of expected
 * failures: the run fails if one of them starts passing (then it applies and moves up) or if
 * anything else fails. README.md (MCP) repeats this list.
 */
const NOT_APPLICABLE: Record<string, string> = {
  'logging-set-level': 'Baton offers no logging capability (deprecated in 2026-07-28; the server logs to its own log).',
  'completion-complete': 'no completion capability: no prompt or resource template argument has a closed set of values worth completing.',
  'elicitation-sep1034-defaults': 'calls a fixture tool of the SDK test server; Baton elicits only in its own tools, for a human (spec/mcp.md § Elicitation, test/mcp/tools.test.ts).',
  'elicitation-sep1330-enums': 'as elicitation-sep1034-defaults.',
  'resources-subscribe': '2025-era clients are served statelessly on /mcp, with no sessions to subscribe in (2026-07-28 clients use subscriptions/listen; baton mcp offers resources/subscribe).',
  'resources-unsubscribe': 'as resources-subscribe.',
  'server-sse-multiple-streams': 'needs a session id; /mcp is stateless (each request authenticated on its own, any instance can answer), so the scenario ends in a warning.',
};
for (const scenario of ['tools-call-simple-text', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-with-logging', 'tools-call-error', 'tools-call-with-progress', 'tools-call-sampling', 'tools-call-elicitation']) {
  NOT_APPLICABLE[scenario] = 'calls a fixture tool (test_*) of the SDK test server; Baton\'s tools are its registry operations. Calls and errors are tested with the official clients in test/mcp/.';
}
for (const scenario of ['resources-read-text', 'resources-read-binary', 'resources-templates-read']) {
  NOT_APPLICABLE[scenario] = 'reads a fixture resource (test://…) of the SDK test server; Baton\'s resources are the spec pages, read in test/mcp/tools.test.ts.';
}
for (const scenario of ['prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image']) {
  NOT_APPLICABLE[scenario] = 'gets a fixture prompt (test_*) of the SDK test server; Baton\'s one prompt, resume, is tested in test/mcp/tools.test.ts.';
}

/** Runs the conformance CLI (installed, so nothing is downloaded) to its exit, without blocking this process. */
function runConformance(args: string[]): Promise<{ status: number | null; output: string }> {
  const child = spawn(process.execPath, [CONFORMANCE, ...args], { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return once(child, 'close').then(([status]) => ({ status: status as number | null, output }));
}

describe('the official MCP conformance server scenarios (@modelcontextprotocol/conformance)', () => {
  it('pass against /mcp where they apply, and fail only where they do not', async () => {
    const baseline = join(workDir, 'not-applicable.yml');
    await writeFile(baseline, `server:\n${Object.keys(NOT_APPLICABLE).map((s) => `  - ${s}`).join('\n')}\n`);
    const run = await runConformance(['server', '--url', proxyUrl, '--suite', 'active', '--expected-failures', baseline, '-o', join(workDir, 'results')]);
    for (const scenario of APPLICABLE) expect(run.output, run.output).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
    expect(run.status, run.output).toBe(0);
  });
});
