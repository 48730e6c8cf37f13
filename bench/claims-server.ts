/**
 * The minimal claim route Baton's claims are measured against: bare Fastify on a pg pool, sending
 * the raw claim, release and complete transactions of bench/claims-statements.ts. No authentication, no
 * idempotency keys, no validation, no view shaping.
 *
 * With `--same-sql` it is the same-SQL route: each request also sends Baton's own statements (the
 * token's grant lookup with its rate count, on a second pool as Baton's `Database.counters`; the
 * idempotency-key claim; the stored response carrying the events), using the request's
 * `Authorization` and `Idempotency-Key`, and still no validation or shaping.
 *
 *   node bench/claims-server.ts --database-url=postgres://… --pool-size=10 [--same-sql]
 *
 *   POST /claim {limit}        → {claims: [{task_id, lease_id, epoch}]}
 *   POST /release/:lease_id    → {}
 *   POST /release {ids}        → {}   (several leases at once)
 *   POST /complete {task_id, lease_id, epoch} → {}   (the holder's move to in_review)
 *
 * Prints `claims baseline listening at http://…` once ready. Exits on SIGTERM, SIGINT or when
 * stdin closes, so it cannot outlive the runner that spawned it.
 */
import { parseArgs } from 'node:util';
import Fastify, { type FastifyRequest } from 'fastify';
import { type Overhead, type RawClaim, rawClaim, rawComplete, rawRelease, rawReleaseMany } from './claims-statements.ts';
import { stockPool } from './pg-pools.ts';
import { serveUntilStopped } from './processes.ts';

async function main(): Promise<void> {
  const options = { 'database-url': { type: 'string' }, 'pool-size': { type: 'string' }, 'same-sql': { type: 'boolean', default: false } } as const;
  const { values } = parseArgs({ options });
  const url = values['database-url'];
  if (!url || !values['pool-size']) throw new Error('usage: --database-url=… --pool-size=10 [--same-sql]');
  const pool = stockPool(url, Number(values['pool-size']));
  const counters = values['same-sql'] ? stockPool(url, Math.max(2, Math.ceil(Number(values['pool-size']) / 2)), { synchronousCommitOff: true }) : undefined;
  const app = Fastify({ logger: false });
  /** Baton's per-request statements for this request, on the same-SQL route. */
  const overhead = (request: FastifyRequest, operation: string): Overhead | undefined => {
    if (!counters) return undefined;
    const token = request.headers.authorization?.replace(/^Bearer /, '') ?? '';
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string') throw new Error('the same-SQL route needs an Idempotency-Key');
    return { counters, token, key, operation };
  };

  app.post('/claim', async (request) => {
    const limit = (request.body as { limit?: number } | undefined)?.limit ?? 1;
    return { claims: await rawClaim(pool, limit, overhead(request, 'tasks_claim_next')) };
  });
  app.post<{ Params: { id: string } }>('/release/:id', async (request) => {
    await rawRelease(pool, request.params.id, overhead(request, 'leases_release'));
    return {};
  });
  app.post('/release', async (request) => {
    await rawReleaseMany(pool, (request.body as { ids: string[] }).ids, overhead(request, 'leases_release_many'));
    return {};
  });
  app.post('/complete', async (request) => {
    await rawComplete(pool, request.body as RawClaim, overhead(request, 'tasks_update'));
    return {};
  });
  app.get('/readyz', async () => {
    await pool.query('SELECT 1');
    return { status: 'ready' };
  });

  await serveUntilStopped(app, 'claims baseline', () => Promise.all([pool.end(), counters?.end()]).then(() => undefined));
}

if (import.meta.main) await main();
