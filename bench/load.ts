import autocannon, { type Request } from 'autocannon';

export const SCENARIOS = ['create', 'get', 'patch'] as const;
export type Scenario = (typeof SCENARIOS)[number];

export const CONNECTIONS = 50;
/** Tasks that get and patch spread over: enough that two patches rarely wait on one row lock. */
export const ID_POOL_SIZE = 500;

/**
 * Seconds before a request counts as failed. On PGlite every request queues for one in-process
 * database and a few wait most of a run (Baton and the baseline alike), so autocannon's 10 s
 * default would fail runs whose answers are all correct, only late.
 */
const REQUEST_TIMEOUT_S = 30;

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

/** True when the scenario reads or changes existing tasks, so the server needs a pool of them first. */
export function needsPool(scenario: Scenario): boolean {
  return scenario !== 'create';
}

/**
 * The requests of one scenario. Each request is built afresh: writes get their own Idempotency-Key
 * (`tag` keeps keys unique across runs) and get/patch walk round the id pool.
 */
export function scenarioRequests(scenario: Scenario, token: string, ids: readonly string[], tag: string): Request[] {
  let n = 0;
  const next = () => n++;
  const idAt = (i: number) => ids[i % ids.length] ?? '';
  const auth = { authorization: `Bearer ${token}` };
  const write = { ...auth, 'content-type': 'application/json' };
  switch (scenario) {
    case 'create':
      return [
        {
          method: 'POST',
          path: '/api/v1/tasks',
          setupRequest: (request) => {
            const i = next();
            return { ...request, headers: { ...write, 'idempotency-key': `${tag}-${i}` }, body: JSON.stringify({ title: `Bench task ${i}`, labels: ['bench', 'load'] }) };
          },
        },
      ];
    case 'get':
      return [{ method: 'GET', headers: auth, setupRequest: (request) => ({ ...request, path: `/api/v1/tasks/${idAt(next())}` }) }];
    case 'patch':
      return [
        {
          method: 'PATCH',
          setupRequest: (request) => {
            const i = next();
            return { ...request, path: `/api/v1/tasks/${idAt(i)}`, headers: { ...write, 'idempotency-key': `${tag}-${i}` }, body: JSON.stringify({ title: `Renamed ${i}` }) };
          },
        },
      ];
  }
}

/** Creates `count` tasks through the server's own create route, 25 at a time; returns their ids. */
export async function seedTasks(url: string, token: string, count: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  const createOne = async (i: number) => {
    const response = await fetch(`${url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `${tag}-seed-${i}` },
      body: JSON.stringify({ title: `Seed task ${i}`, labels: ['bench'] }),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`seeding: POST /api/v1/tasks answered ${response.status}: ${text.slice(0, 500)}`);
    ids.push((JSON.parse(text) as { id: string }).id);
  };
  for (let start = 0; start < count; start += 25) {
    await Promise.all(Array.from({ length: Math.min(25, count - start) }, (_, j) => createOne(start + j)));
  }
  return ids;
}

/**
 * Runs autocannon with `CONNECTIONS` connections for `seconds`, as fast as the server answers or,
 * given `rate`, at that many requests a second. Throws when any request failed or answered other
 * than 2xx: a benchmark of error answers measures nothing. Requests still in flight when time is
 * up are not counted.
 */
export async function runLoad(url: string, requests: Request[], seconds: number, rate?: number): Promise<LoadResult> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, timeout: REQUEST_TIMEOUT_S, requests, ...(rate ? { overallRate: rate } : {}) });
  const total = result.requests.total;
  if (result.non2xx > 0 || result.errors > 0) {
    const statuses = Object.entries(result.statusCodeStats)
      .map(([status, { count }]) => `${status}×${count}`)
      .join(', ');
    throw new Error(`${total} responses, ${result.non2xx} non-2xx, ${result.errors} errors (${result.timeouts} timeouts); status codes: ${statuses || 'none'}`);
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, requests: total };
}
