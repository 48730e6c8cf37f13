/**
 * `npm run bench:cli`: how long `baton tasks list` takes from the installed package, start to exit,
 * as an agent calling the CLI once per step sees it. Packs the server package (its prepack builds it,
 * from a copy of the checkout), installs it into a fresh project, serves a PGlite database of 20
 * tasks from this checkout in-process, then runs the installed bin (`node_modules/.bin/baton`, what
 * `npm i -g` puts on PATH) BENCH_CLI_RUNS times (default 30) after 3 warm-up runs, one after the
 * other, and `npx baton-tasks tasks list` 10 times for comparison. BENCH_TARBALL skips the packing.
 * Prints the median and p99 wall time and the median CPU time with the machine, date, commit and load.
 */
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { openPglite } from '../src/store/database.ts';
import { installInto, packBoth, REPO, start } from '../test/package/packed.ts';

const RUNS = Number(process.env.BENCH_CLI_RUNS ?? 30);

const packed = process.env.BENCH_TARBALL ? undefined : await packBoth();
const tarball = process.env.BENCH_TARBALL ?? packed?.server ?? '';
const project = await installInto('baton-bench-cli-', [tarball]);
const server = await createServer(loadConfig({ BATON_RATE_LIMIT: '1000000000/60s', BATON_LOG_LEVEL: 'silent' }), { database: await openPglite({}) });
const base = await server.app.listen({ port: 0, host: '127.0.0.1' });
const env = { BATON_URL: base, BATON_TOKEN: server.bootstrapToken ?? '' };
for (let i = 0; i < 20; i++) await server.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { authorization: `Bearer ${env.BATON_TOKEN}`, 'idempotency-key': `bench-${i}` }, payload: { title: `task ${i}` } });

/**
 * One run to its exit: wall time, and the CPU time (user + system) GNU time reports, which a busy
 * shared machine inflates far less than the wall time; fails the benchmark if the command fails.
 */
async function once(command: string, args: string[]): Promise<{ wall: number; cpu: number }> {
  const began = performance.now();
  const { code, stdout, stderr } = await start('/usr/bin/time', ['-f', 'cpu %U %S', command, ...args], { cwd: project, env }).outcome;
  const wall = performance.now() - began;
  const cpu = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
  if (code !== 0 || !stdout.includes('task 19') || !cpu) throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${stdout}\n${stderr}`);
  return { wall, cpu: (Number(cpu[1]) + Number(cpu[2])) * 1000 };
}

interface Figures {
  median: number;
  p99: number;
  cpuMedian: number;
}

async function measure(command: string, args: string[], runs: number): Promise<Figures> {
  for (let i = 0; i < 3; i++) await once(command, args);
  const samples: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once(command, args));
  const at = (values: number[], q: number) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)] ?? Number.NaN;
  const walls = samples.map((s) => s.wall);
  return { median: at(walls, 0.5), p99: at(walls, 0.99), cpuMedian: at(samples.map((s) => s.cpu), 0.5) };
}

try {
  const bin = await measure(process.execPath, [join(project, 'node_modules/.bin/baton'), 'tasks', 'list'], RUNS);
  const npx = await measure('npx', ['baton-tasks', 'tasks', 'list'], 10);
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
  const cpu = cpus();
  console.log(`${new Date().toISOString().slice(0, 10)}, Baton ${commit}, ${cpu.length} cores (${cpu[0]?.model ?? 'unknown'}), Node ${process.versions.node}`);
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end`);
  console.log('| command | runs | median ms | p99 ms | median CPU ms |\n|---|---:|---:|---:|---:|');
  console.log(`| baton tasks list (installed bin) | ${RUNS} | ${bin.median.toFixed(0)} | ${bin.p99.toFixed(0)} | ${bin.cpuMedian.toFixed(0)} |`);
  console.log(`| npx baton-tasks tasks list | 10 | ${npx.median.toFixed(0)} | ${npx.p99.toFixed(0)} | ${npx.cpuMedian.toFixed(0)} |`);
} finally {
  await server.close();
  await rm(project, { recursive: true, force: true });
  await packed?.remove();
}
