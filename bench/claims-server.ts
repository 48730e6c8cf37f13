/**
 * The minimal claim route Baton's claims are measured against: bare Fastify on a pg pool, sending
 * the raw claim, release and complete transactions of bench/claims-statements.ts. No authentication, no
 * idempotency keys, no validation, no view shaping.
 *
 *   node bench/claims-server.ts --database-url=postgres://… --pool-size=10
 *
 *   POST /claim {limit}        → {claims: [{task_id, lease_id, epoch}]}
 *   POST /release/:lease_id    → {}
 *   POST /complete {task_id, lease_id, epoch} → {}   (the holder's move to in_review)
 *
 * Prints `claims baseline listening at http://…` once ready. Exits on SIGTERM, SIGINT or when
 * stdin closes, so it cannot outlive the runner that spawned it.
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { type RawClaim, rawClaim, rawComplete, rawRelease } from './claims-statements.ts';
import { openPool } from '../src/store/database.ts';
import { serveUntilStopped } from './processes.ts';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'database-url': { type: 'string' }, 'pool-size': { type: 'string' } } });
  const url = values['database-url'];
  if (!url || !values['pool-size']) throw new Error('usage: --database-url=… --pool-size=10');
  const pool = openPool(url, Number(values['pool-size']));
  const app = Fastify({ logger: false });

  app.post('/claim', async (request) => {
    const limit = (request.body as { limit?: number } | undefined)?.limit ?? 1;
    return { claims: await rawClaim(pool, limit) };
  });
  app.post<{ Params: { id: string } }>('/release/:id', async (request) => {
    await rawRelease(pool, request.params.id);
    return {};
  });
  app.post('/complete', async (request) => {
    await rawComplete(pool, request.body as RawClaim);
    return {};
  });
  app.get('/readyz', async () => {
    await pool.query('SELECT 1');
    return { status: 'ready' };
  });

  await serveUntilStopped(app, 'claims baseline', () => pool.end());
}

if (import.meta.main) await main();
