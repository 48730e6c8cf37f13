/**
 * What bench/fleet.ts sets up around Baton: one agent principal and token per simulated agent
 * (seeded through SQL in bulk) and the webhook subscribers (node:http receivers in the benchmark's
 * process). PgBouncer for several instances is test/ops/pgbouncer.ts's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createIds } from '../src/ids.ts';
import { generateToken, hashToken, tokenPrefix } from '../src/tokens.ts';
import type { Cleanup } from './processes.ts';

/** An agent needs to read and claim its work, heartbeat and hand in (all `tasks:claim`); nothing else. */
const AGENT_SCOPES = ['tasks:read', 'tasks:claim'];

/**
 * Inserts `count` agent principals (`fleet-agent-<n>`, n from 0), each with one live token on the
 * machine `fleet`, in two statements, as test/harness.ts `addPrincipal` stores one (the token's
 * SHA-256 and prefix, src/tokens.ts); answers the tokens, agent n's at index n.
 */
export async function seedAgentPrincipals(url: string, count: number): Promise<string[]> {
  const ids = createIds();
  const tokens = Array.from({ length: count }, () => generateToken());
  const agentIds = tokens.map(() => ids.make('agt'));
  const tokenIds = tokens.map(() => ids.make('tok'));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO agents (id, name, kind, scopes, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
       SELECT id, 'fleet-agent-' || (n - 1), 'agent', $2::text[], now(), 'system', 'system', now(), 'system', 'system'
       FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)`,
      [agentIds, AGENT_SCOPES],
    );
    await client.query(
      `INSERT INTO tokens (id, agent_id, machine, token_hash, token_prefix, scopes, created_at, created_by_id, created_by_kind)
       SELECT id, agent_id, 'fleet', decode(hash, 'hex'), prefix, $5::text[], now(), 'system', 'system'
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(id, agent_id, hash, prefix)`,
      [tokenIds, agentIds, tokens.map((t) => hashToken(t).toString('hex')), tokens.map(tokenPrefix), AGENT_SCOPES],
    );
    await client.query('COMMIT');
    await client.query('ANALYZE agents; ANALYZE tokens');
  } finally {
    await client.end();
  }
  return tokens;
}

/** One transition per task change, as a subscriber that follows the work wants it (not the status_changed and lease.released that repeat them, nor heartbeats). */
export const LIFECYCLE_EVENTS = ['task.claimed', 'task.handed_in', 'task.attempt_failed', 'task.dead_lettered', 'task.requeued', 'lease.expired'];

/** Deliveries one receiver heard. */
export interface Receiver {
  readonly url: string;
  /** Deliveries that arrived in [from, to): count, repeats of an event already received, lags (ms) from the event's created_at. */
  received(from: number, to: number): { count: number; repeats: number; lags: number[] };
}

/** A webhook receiver on 127.0.0.1 answering 200 at once; closed on cleanup. */
export async function startReceiver(cleanup: Cleanup): Promise<Receiver> {
  const arrivals: { at: number; lag: number; repeat: boolean }[] = [];
  const seen = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      response.writeHead(200).end();
      const id = String(request.headers['webhook-id']);
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
      arrivals.push({ at, lag: at - Date.parse(event.created_at), repeat: seen.has(id) });
      seen.add(id);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received(from, to) {
      const inWindow = arrivals.filter((a) => a.at >= from && a.at < to);
      return { count: inWindow.length, repeats: inWindow.filter((a) => a.repeat).length, lags: inWindow.map((a) => a.lag) };
    },
  };
}

/** Subscribes `url` through the API (the admin token; an admin's webhook needs no approval). */
export async function subscribe(baseUrl: string, token: string, url: string, eventTypes: readonly string[] | null): Promise<void> {
  const response = await fetch(`${baseUrl}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': `fleet-webhook-${url}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, ...(eventTypes ? { event_types: eventTypes } : {}) }),
  });
  if (response.status !== 201) throw new Error(`POST /webhooks answered ${response.status}: ${await response.text()}`);
}
