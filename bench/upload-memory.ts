/**
 * Peak memory of one Baton instance under N concurrent maximal artifact uploads (issue 22 item 10).
 * Starts `baton serve` on PostgreSQL (a scratch database, dropped after), gives each upload its own
 * agent token, sends N bodies of BATON_ARTIFACT_MAX_BYTES (25 MiB decoded, base64) at once, and
 * prints the server's peak RSS above idle (Linux /proc: VmHWM after resetting it at idle) and the
 * statuses. Settings: UPLOADS (default 16), BENCH_DATABASE_URL (default the local server).
 *   node bench/upload-memory.ts
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { generateToken } from '../src/tokens.ts';

const UPLOADS = Number(process.env.UPLOADS ?? 16);
const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MAX_BYTES = 25 * 1024 * 1024;

const kib = async (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const mb = (k: number) => `${(k / 1024).toFixed(0)} MB`;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dbName = `baton_upload_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: SERVER });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const url = new URL(SERVER);
url.pathname = `/${dbName}`;
const port = await freePort();
const token = generateToken();
const child = spawn(process.execPath, ['src/cli/baton.ts', 'serve'], {
  env: { PATH: process.env.PATH ?? '', DATABASE_URL: url.toString(), PORT: String(port), BATON_BOOTSTRAP_TOKEN: token, BATON_LOG_LEVEL: 'silent', BATON_RATE_LIMIT: '100000/60s' },
  stdio: 'ignore',
});
const base = `http://127.0.0.1:${port}/api/v1`;
const call = (method: string, path: string, bearer: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok) break;
    if (i > 600) throw new Error('the server did not start');
    await sleep(100);
  }
  const tokens: string[] = [];
  for (let i = 0; i < UPLOADS; i++) {
    const agent = (await (await call('POST', '/agents', token, { name: `uploader-${i}`, scopes: ['artifacts:write'] })).json()) as { id: string };
    tokens.push(((await (await call('POST', `/agents/${agent.id}/tokens`, token, { machine: 'bench' })).json()) as { token: string }).token);
  }
  const body = JSON.stringify({ content: randomBytes(MAX_BYTES).toString('base64'), encoding: 'base64' });
  (globalThis as { gc?: () => void }).gc?.();
  await sleep(2000);
  const idle = await kib(child.pid ?? 0, 'VmRSS');
  // "5" resets the peak (VmHWM) to the current RSS, so the peak is this run's.
  await writeFile(`/proc/${child.pid}/clear_refs`, '5');
  const started = Date.now();
  const statuses = await Promise.all(tokens.map((t) => call('POST', '/artifacts', t, body).then(async (r) => (await r.arrayBuffer(), r.status), () => 0)));
  const peak = await kib(child.pid ?? 0, 'VmHWM');
  const counts = Object.entries(statuses.reduce<Record<number, number>>((c, s) => ({ ...c, [s]: (c[s] ?? 0) + 1 }), {}));
  console.log(`${UPLOADS} concurrent uploads of ${MAX_BYTES} bytes (PostgreSQL) in ${Date.now() - started} ms: statuses ${counts.map(([s, n]) => `${s}×${n}`).join(', ')}`);
  console.log(`idle RSS ${mb(idle)}, peak RSS ${mb(peak)}, peak above idle ${mb(peak - idle)}`);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  await admin.query(`DROP DATABASE IF EXISTS ${dbName}`);
  await admin.end();
}
