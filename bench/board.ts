/**
 * `npm run bench:board [-- --tasks=1000|10000] [--engine=pglite|postgres] [--runs=N] [--no-write]`
 *
 * The web board at 1,000 tasks (or `--tasks`, up to the board's 10,000), in a real browser. Builds
 * the web app (as `npm start` does), starts Baton as a child process on a fresh database, seeds the
 * tasks through the API (four priorities, five labels, titles from a small vocabulary; 60 % to do,
 * 20 % blocked, 20 % cancelled),
 * signs in headless Chromium (/usr/bin/chromium, driven by playwright-core) and measures, N times
 * each (default 20), in the page's own clock:
 *
 * - first cards: reload → the first card in the DOM and the frame after it painted;
 * - all loaded: reload → every column counts its tasks (the last page of 100 has landed);
 * - filter: choosing a priority → the columns hold only that priority, painted;
 * - clear: back to every priority, painted;
 * - search: submitting a word → the columns hold only the server's matches, painted (one `GET
 *   /tasks?q=` round trip).
 *
 * Prints median and p99 (over N runs, p99 is the slowest but one at most) and writes them, with the
 * machine, date and commit, into the "Board at N tasks" section of bench/README.md
 * (`--no-write` leaves it alone). Everything it starts is removed on exit, on error and on Ctrl-C.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { type Page, chromium } from 'playwright-core';
import { build } from 'vite';
import { generateToken } from '../src/tokens.ts';
import { type Engine, ENGINES, freshDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { Cleanup, startServer, wasInterrupted } from './processes.ts';
import { describeMachine } from './report.ts';

const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const README = new URL('README.md', import.meta.url);
/** The README section of each size measured; another size gets its own. */
const sectionTitle = (tasks: number) => (tasks === 1000 ? '## Board at 1,000 tasks (issue 27, item 5)' : tasks === 10_000 ? '## Board at 10,000 tasks (issue 43)' : `## Board at ${tasks.toLocaleString('en')} tasks`);
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** The board reads at most 100 pages of 100 (web/src/views/board-tasks.ts). */
const MAX_TASKS = 10_000;
const PRIORITIES = ['urgent', 'high', 'normal', 'low'] as const;
const LABELS = ['backend', 'web', 'docs', 'ops', 'security'];
const VERBS = ['Fix', 'Review', 'Document', 'Migrate', 'Test'];
const NOUNS = ['invoice export', 'login redirect', 'webhook retries', 'search index', 'billing page', 'release notes', 'rate limiter', 'audit log', 'backup job', 'token rotation'];
/** The searched word: in one title of ten (100 of 1,000 tasks); the board keeps the best 1,000 matches. */
const SEARCH = 'invoice';
const searchMatches = (tasks: number) => Math.min(1000, tasks / 10);

interface Sample {
  firstCards: number;
  allLoaded: number;
  filter: number;
  clear: number;
  search: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { tasks: { type: 'string', default: '1000' }, engine: { type: 'string', default: 'pglite' }, runs: { type: 'string', default: '20' }, 'no-write': { type: 'boolean', default: false } } });
  const tasks = Number(values.tasks);
  if (!(Number.isInteger(tasks) && tasks >= 100 && tasks <= MAX_TASKS && tasks % 100 === 0)) throw new Error(`--tasks is a multiple of 100 from 100 to ${MAX_TASKS}, e.g. --tasks=10000 (got ${values.tasks})`);
  const engine = values.engine as Engine;
  if (!ENGINES.includes(engine)) throw new Error(`--engine is one of ${ENGINES.join(', ')} (got ${values.engine})`);
  const runs = Number(values.runs);
  if (!(Number.isInteger(runs) && runs >= 1)) throw new Error(`--runs must be a positive integer, e.g. --runs=20 (got ${values.runs})`);
  const machine = await describeMachine(engine === 'postgres' ? await postgresVersion() : 'not used');
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  try {
    log('building the web app…');
    await build({ configFile: fileURLToPath(new URL('../web/vite.config.ts', import.meta.url)), logLevel: 'warn' });
    const token = generateToken();
    const database = await freshDatabase(engine, `baton_bench_board_${Date.now()}`, token, cleanup);
    const server = await startServer([BATON_MAIN], {
      PORT: '0',
      HOST: '127.0.0.1',
      BATON_LOG_LEVEL: 'warn',
      BATON_BOOTSTRAP_TOKEN: token,
      BATON_RATE_LIMIT: RATE_LIMIT,
      ...(database.engine === 'postgres' ? { DATABASE_URL: database.url } : { BATON_DATA_DIR: database.dataDir }),
    }, cleanup);
    log(`seeding ${tasks} tasks through the API…`);
    const seedStart = Date.now();
    await seed(server.url, token, tasks);
    log(`  seeded in ${Math.round((Date.now() - seedStart) / 1000)} s`);
    log('launching Chromium…');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
    cleanup.add(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(server.url);
    await page.fill('#token', token);
    await page.click('button[type=submit]');
    await page.getByRole('heading', { name: 'Board' }).waitFor({ timeout: 30_000 });
    log('signed in; warming up…');
    await measureOnce(page, tasks); // warm-up: caches, JIT, the server's first queries
    const samples: Sample[] = [];
    for (let run = 0; run < runs; run++) {
      samples.push(await measureOnce(page, tasks));
      log(`run ${run + 1}/${runs}: ${JSON.stringify(samples.at(-1), (_, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`);
    }
    const rendered = await page.locator('article.task-card').count();
    const table = summary(samples, tasks);
    const text = section({ tasks, machine, engine, runs, rendered, table, date: new Date().toISOString().slice(0, 10), commit: await webRevision() });
    log(`\n${text}`);
    if (!values['no-write']) {
      await writeSection(sectionTitle(tasks), text);
      log('written to bench/README.md');
    }
  } catch (error) {
    if (!wasInterrupted()) throw error;
  } finally {
    await cleanup.run();
  }
}

/** `total` tasks, 25 requests at a time; then a fifth blocked and a fifth cancelled. */
async function seed(url: string, token: string, total: number): Promise<void> {
  const call = async (method: string, path: string, body: unknown, key: string) => {
    const res = await fetch(`${url}/api/v1${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`seeding: ${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as { id: string };
  };
  const ids: string[] = [];
  for (let start = 0; start < total; start += 25) {
    const batch = Array.from({ length: Math.min(25, total - start) }, (_, j) => start + j);
    ids.push(
      ...(await Promise.all(
        batch.map(async (i) => {
          const title = `${VERBS[i % VERBS.length]} the ${NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]} (${i})`;
          return (await call('POST', '/tasks', { title, priority: PRIORITIES[i % PRIORITIES.length], labels: [LABELS[i % LABELS.length]] }, `board-seed-${i}`)).id;
        }),
      )),
    );
  }
  log(`  ${ids.length} created`);
  const fifth = total / 5;
  const moves = ids.slice(0, 2 * fifth).map((id, i) => ({ id, status: i < fifth ? 'blocked' : 'cancelled' }));
  for (let start = 0; start < moves.length; start += 25) {
    await Promise.all(moves.slice(start, start + 25).map((m) => call('PATCH', `/tasks/${m.id}`, { status: m.status }, `board-move-${m.id}`)));
  }
}

/** One reload and one filter, clear and search, each timed in the page from its start to the frame after the board shows the result. */
async function measureOnce(page: Page, tasks: number): Promise<Sample> {
  await page.reload({ waitUntil: 'commit' });
  const firstCards = await painted(page, 'first', tasks);
  const allLoaded = await painted(page, 'all', tasks);
  const filter = await timeChange(page, 'filter', tasks);
  const clear = await timeChange(page, 'clear', tasks);
  const search = await timeChange(page, 'search', tasks);
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await page.waitForURL((url) => url.search === '');
  return { firstCards, allLoaded, filter, clear, search };
}

/**
 * `performance.now()` (ms since the navigation started) at the frame painted after the board shows
 * its first card, or counts every task: a MutationObserver sees the DOM reach it, then one
 * animation frame and a message (which runs after that frame is painted).
 */
function painted(page: Page, which: 'first' | 'all', total: number): Promise<number> {
  return page.evaluate(
    async ({ which, total }) => {
      const counts = () => [...document.querySelectorAll('.column .count')].reduce((sum, el) => sum + Number(el.textContent), 0);
      const done = which === 'first' ? () => document.querySelector('article.task-card') !== null : () => counts() === total;
      if (!done()) {
        await new Promise<void>((resolve) => {
          const observer = new MutationObserver(() => {
            if (!done()) return;
            observer.disconnect();
            resolve();
          });
          observer.observe(document, { subtree: true, childList: true, characterData: true });
        });
      }
      await new Promise((resolve) => requestAnimationFrame(resolve));
      await new Promise((resolve) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = resolve;
        channel.port2.postMessage(null);
      });
      return performance.now();
    },
    { which, total },
  );
}

/**
 * Ms from the change (a select's change event, a search form's submit) to the frame painted after
 * the board holds the result: a MutationObserver sees the DOM reach it, then one animation frame
 * and a message (which runs after that frame is painted).
 */
function timeChange(page: Page, what: 'filter' | 'clear' | 'search', total: number): Promise<number> {
  return page.evaluate(
    async ({ what, total, word, matches }) => {
      const counts = () => [...document.querySelectorAll('.column .count')].reduce((sum, el) => sum + Number(el.textContent), 0);
      const titles = () => [...document.querySelectorAll('article.task-card .task-title')].map((el) => el.textContent ?? '');
      const priorities = () => [...document.querySelectorAll('article.task-card .priority')].map((el) => el.textContent?.toLowerCase());
      const done = {
        filter: () => counts() === total / 4 && priorities().every((p) => p === 'urgent'),
        clear: () => counts() === total,
        search: () => counts() === matches && titles().every((t) => t.toLowerCase().includes(word)),
      }[what];
      const box = document.querySelector<HTMLInputElement>('input[aria-label="Search titles, descriptions and comments"]');
      const select = document.querySelector<HTMLSelectElement>('select[aria-label="Filter by priority"]');
      if (!box || !select) throw new Error('no search box or priority filter');
      if (what === 'search') {
        // Typing is not timed: the word is in the box (and the app's state) before the clock starts at Enter.
        box.value = word;
        box.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      let observer: MutationObserver | undefined;
      const reached = new Promise<void>((resolve) => {
        observer = new MutationObserver(() => {
          if (done()) resolve();
        });
        observer.observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      const start = performance.now();
      if (what === 'search') box.form?.requestSubmit();
      else {
        select.value = what === 'filter' ? 'urgent' : '';
        select.dispatchEvent(new Event('change', { bubbles: true }));
      }
      await reached;
      observer?.disconnect();
      await new Promise((resolve) => requestAnimationFrame(resolve));
      await new Promise((resolve) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = resolve;
        channel.port2.postMessage(null);
      });
      return performance.now() - start;
    },
    { what, total, word: SEARCH, matches: searchMatches(total) },
  );
}

const ROWS = (tasks: number): [keyof Sample, string][] => {
  const n = (x: number) => x.toLocaleString('en');
  return [
    ['firstCards', 'first render: reload → first cards painted'],
    ['allLoaded', `reload → all ${n(tasks)} counted (${n(tasks / 100)} pages of 100)`],
    ['filter', `apply a filter (priority: ${n(tasks / 4)} of ${n(tasks)})`],
    ['clear', `clear the filter (${n(tasks)})`],
    ['search', `search “${SEARCH}” on the server (${n(searchMatches(tasks))} matches)`],
  ];
};

function summary(samples: readonly Sample[], tasks: number): string {
  const pick = (values: number[], q: number) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)] ?? NaN;
  const lines = ROWS(tasks).map(([key, label]) => {
    const values = samples.map((s) => s[key]);
    return `| ${label} | ${pick([...values], 0.5).toFixed(0)} ms | ${pick([...values], 0.99).toFixed(0)} ms |`;
  });
  return ['| measured | median | p99 |', '| --- | ---: | ---: |', ...lines].join('\n');
}

function section(r: { tasks: number; machine: Awaited<ReturnType<typeof describeMachine>>; engine: Engine; runs: number; rendered: number; table: string; date: string; commit: string }): string {
  const m = r.machine;
  const n = r.tasks.toLocaleString('en');
  return `${sectionTitle(r.tasks)}

\`npm run bench:board\` (bench/board.ts): Baton on ${r.engine === 'pglite' ? 'PGlite' : `PostgreSQL ${m.postgres}`} as a child process,
${n} tasks seeded through the API (60 % to do, 20 % blocked, 20 % cancelled; four priorities, five
labels), headless Chromium at 1280×800 driven by playwright-core. Each figure is timed in the page
from the action to the frame painted after the board shows the result; ${r.runs} runs after one warm-up,
p99 is the slowest run or close to it. The board reads every task in pages of 100 and shows each
page as it lands, but renders at most 30 cards a column until "Show more": ${r.rendered} cards in the DOM
with ${n} tasks loaded. Filter and clear run in the page, with no request; search is one
\`GET /tasks?q=\` round trip and the render.

${r.table}

Machine: ${m.cores} cores, ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}, load ${m.load} before the run (a
shared machine: other sessions were running). Date ${r.date}, commit ${r.commit}.
`;
}

/** Replaces the section (up to the next `## `) or appends it. */
async function writeSection(title: string, text: string): Promise<void> {
  const readme = await readFile(README, 'utf8');
  const start = readme.indexOf(title);
  if (start < 0) return writeFile(README, `${readme.trimEnd()}\n\n${text}`);
  const next = readme.indexOf('\n## ', start + title.length);
  await writeFile(README, `${readme.slice(0, start)}${text}${next < 0 ? '' : readme.slice(next)}`);
}

/** The commit measured, and whether the web app or the server differ from it. */
async function webRevision(): Promise<string> {
  const git = (...args: string[]) => promisify(execFile)('git', args, { cwd: new URL('..', import.meta.url) }).then(({ stdout }) => stdout.trim());
  const [commit, changes] = await Promise.all([git('rev-parse', '--short', 'HEAD'), git('status', '--porcelain', '--', 'web/src', 'src', 'migrations')]);
  return changes ? `${commit} with uncommitted changes` : commit;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

await main();
