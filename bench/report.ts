import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { availableParallelism, loadavg, totalmem } from 'node:os';
import { DB_POOL_SIZE, type Engine, RATE_LIMIT } from './databases.ts';
import { CONNECTIONS, type LoadResult, ID_POOL_SIZE, type Scenario } from './load.ts';

/** Baton's throughput as a share of the baseline's that the issue asks for. */
export const TARGET_RATIO = 0.9;

/** One server's run: autocannon's numbers plus the server process's CPU time per request. */
export interface Measurement extends LoadResult {
  /** Milliseconds of CPU (user + system) per request, server and database backends; undefined where /proc is missing. */
  cpuMs: number | undefined;
}

export interface Row {
  engine: Engine;
  scenario: Scenario;
  /** The round with the median ratio. */
  baton: Measurement;
  baseline: Measurement;
  /** The lowest and highest ratio over all rounds. */
  ratioRange: [number, number];
}

export interface Machine {
  cores: number;
  cpu: string;
  memoryGiB: string;
  node: string;
  postgres: string;
  pglite: string;
  /** 1-minute load average before the run: other work on the machine skews every number. */
  load: string;
  /** The commit measured, and whether src/ or migrations/ differ from it. */
  revision: string;
}

export async function describeMachine(postgres: string): Promise<Machine> {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const pglite = JSON.parse(await readFile(new URL('../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')) as { version: string };
  return {
    cores: availableParallelism(),
    cpu: /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? 'unknown',
    memoryGiB: (totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    postgres,
    pglite: pglite.version,
    load: loadavg()[0]?.toFixed(2) ?? 'unknown',
    revision: await revision(),
  };
}

async function revision(): Promise<string> {
  const git = (...args: string[]) => promisify(execFile)('git', args, { cwd: new URL('..', import.meta.url) }).then(({ stdout }) => stdout.trim());
  try {
    const [commit, changes] = await Promise.all([git('rev-parse', '--short', 'HEAD'), git('status', '--porcelain', '--', 'src', 'migrations')]);
    return changes ? `${commit} with uncommitted changes in src/ or migrations/` : commit;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** Two decimals, or three where two would round a ratio under the target up to it (0.896 is not 0.90). */
function ratioText(ratio: number): string {
  const text = ratio.toFixed(2);
  return ratio < TARGET_RATIO && Number(text) >= TARGET_RATIO ? ratio.toFixed(3) : text;
}

/** The results as a Markdown table, one line per (engine, scenario). */
export function resultsTable(rows: readonly Row[]): string {
  const lines = [
    '| engine | scenario | Baton rps | p50 ms | p99 ms | CPU ms/req | baseline rps | p50 ms | p99 ms | CPU ms/req | ratio | all rounds | CPU ratio |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const cells = (m: Measurement) => [m.rps.toFixed(0), m.p50, m.p99, m.cpuMs?.toFixed(2) ?? '–'].join(' | ');
  for (const { engine, scenario, baton, baseline, ratioRange: [low, high] } of rows) {
    const ratio = baton.rps / baseline.rps;
    const mark = ratio >= TARGET_RATIO ? '' : ' ✗';
    const range = low === high ? '–' : `${low.toFixed(2)}–${high.toFixed(2)}×`;
    const cpuRatio = baton.cpuMs && baseline.cpuMs ? `${(baseline.cpuMs / baton.cpuMs).toFixed(2)}×` : '–';
    lines.push(`| ${engine} | ${scenario} | ${cells(baton)} | ${cells(baseline)} | ${ratioText(ratio)}×${mark} | ${range} | ${cpuRatio} |`);
  }
  return lines.join('\n');
}

/** A `--rate` run: CPU per request at one fixed rate, and the baseline's over Baton's (median pair, all rounds). */
export function fixedRateTable(rows: readonly Row[], rate: number): string {
  const lines = [
    '| engine | scenario | rate /s | Baton rps | CPU ms/req | baseline rps | CPU ms/req | CPU ratio | all rounds |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { engine, scenario, baton, baseline, ratioRange: [low, high] } of rows) {
    const ratio = baton.cpuMs && baseline.cpuMs ? baseline.cpuMs / baton.cpuMs : Number.NaN;
    const range = low === high ? '–' : `${low.toFixed(2)}–${high.toFixed(2)}×`;
    lines.push(`| ${engine} | ${scenario} | ${rate} | ${baton.rps.toFixed(0)} | ${baton.cpuMs?.toFixed(3) ?? '–'} | ${baseline.rps.toFixed(0)} | ${baseline.cpuMs?.toFixed(3) ?? '–'} | ${ratioText(ratio)}× | ${range} |`);
  }
  return lines.join('\n');
}

export interface Report {
  rows: readonly Row[];
  machine: Machine;
  command: string;
  /** The verdict of bench/sql-check.ts: does the baseline send Baton's statements? */
  sql: string;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
  date: Date;
}

export async function writeResults(path: URL, report: Report): Promise<void> {
  const { machine: m } = report;
  const text = `# Benchmark results

${report.date.toISOString()} — \`${report.command}\` — Baton ${m.revision}

${resultsTable(report.rows)}

Ratio = Baton rps ÷ baseline rps; ✗ marks a ratio under the ${TARGET_RATIO}× target. CPU ratio = the
baseline's CPU ms/req ÷ Baton's, for the same pair: the rate ratio a CPU-bound machine would give
(here it tracks the rps ratio within a few hundredths, round by round). rps is autocannon's
mean of per-second samples, p50/p99 its latency percentiles. CPU ms/req is the user + system CPU
time over the run, divided by its requests, of the server process and, on PostgreSQL, of the
backends serving its database (listed and read every second, so those a pool opens or closes
during the run count too; PGlite runs inside the server process); it is the figure least
disturbed by other work on the machine. On PGlite all requests queue for one in-process database,
so p99 runs to seconds for both servers. Every request of every run answered 2xx (the benchmark
fails otherwise).

SQL check: ${report.sql.includes('\n') ? `\n\n\`\`\`\n${report.sql}\n\`\`\`` : `${report.sql}.`}

Machine: ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB memory, load average ${m.load} before the run;
Node ${m.node}; PostgreSQL ${m.postgres}; PGlite ${m.pglite}.

## Method

- autocannon, ${report.seconds} s per run after a ${report.warmupSeconds} s warm-up, ${CONNECTIONS} connections, on
  the same machine as the servers. For each engine and scenario, Baton and the baseline run as a
  pair ${report.rounds} times (\`BENCH_ROUNDS\`), taking turns to go first; the table shows the pair with the
  median ratio, and "all rounds" the lowest and highest ratio of the pairs. One pair's ratio moves
  by about ±0.1 from run to run on these shared machines (PGlite create once gave 0.74× and 0.93×
  for the same code, minutes apart), so a single pair says little.
- Each run starts its server afresh in a child process, on a database made for the engine (a
  fresh PostgreSQL database, or a fresh PGlite data directory) by Baton's own start-up: migrated,
  with the bootstrap admin. get and patch first create ${ID_POOL_SIZE} tasks through the server's own create
  route and spread requests over them.
- Baton: \`node src/main.ts\` with its defaults (lease sweeper included) but \`BATON_LOG_LEVEL=warn\`,
  \`BATON_DB_POOL_SIZE=${DB_POOL_SIZE}\`, \`BATON_RATE_LIMIT=${RATE_LIMIT}\` (the default budget would answer
  429 within a second; requests are still counted), and \`DATABASE_URL\` or \`BATON_DATA_DIR\`;
  requests carry the admin's token.
- Baseline (\`bench/baseline-server.ts\`): bare Fastify routes sending the SQL Baton sends for the
  request (\`bench/baseline-statements.ts\`), on a pg pool of the same size or on PGlite in process:
  the token's grant lookup that also counts the request in its rate window (on a second pool whose
  sessions run \`synchronous_commit = off\`, as Baton's \`Database.counters\`); for writes \`begin\`, the
  idempotency-key claim, the task insert (or \`select … for update\` + update), one statement that
  stores the response and appends the event under its advisory lock, \`commit\`. It answers with the row as JSON; no validation
  or shaping. On PostgreSQL it runs on stock pg (\`bench/pg-pools.ts\`, no Baton code), sending every statement
  as a named prepared statement through pg's public \`{ name, text, values }\`, as Baton does: the same SQL, sent the same way, and the ratio shows only what Baton
  does in process. (Before 2026-11-23 neither prepared; a
  preparing Baton beside an unprepared baseline would flatter Baton, since planning is most of
  the database's work for these statements.)
- Claims: \`npm run bench\` then runs \`bench/claims.ts\` (claim-next + release cycles, claim +
  complete cycles, batch claims of 16), whose tables go to [CLAIMS.md](CLAIMS.md), and last
  \`bench/peers.ts\` (pg-boss and graphile-worker on the same machine, [PEERS.md](PEERS.md)).
- Partial runs (\`--engine\`, \`--scenario\`), \`--profile\` runs and fixed-rate runs (\`--rate=N\`: N requests a
  second, comparing CPU per request) print their table and leave this file alone.
- The SQL check (\`bench/sql-check.ts\`) runs Baton in process before the runs, records the statements
  it sends for one request of each scenario and compares them with the baseline's.
- Not in the baseline, by choice: Baton's per-request \`update tokens set last_used_at …\`
  (\`touchToken\`, sent by \`src/service/authenticate.ts\`), which changes no row 59 seconds in 60;
  it counts as Baton's cost.
- Scenarios: create = \`POST /api/v1/tasks {title, labels}\`; get = \`GET /api/v1/tasks/{id}\`;
  patch = \`PATCH /api/v1/tasks/{id} {title}\` without If-Match. Writes send a unique Idempotency-Key.
`;
  await writeFile(path, text);
}
