/**
 * What bench/fleet.ts sets up around Baton: one agent principal and token per simulated agent
 * (seeded through SQL in bulk), the webhook subscribers (node:http receivers in the benchmark's
 * process), and PgBouncer in transaction mode in front of PostgreSQL for several instances.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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

/** PgBouncer in front of one PostgreSQL server. */
export interface PgBouncer {
  readonly pid: number;
  /** `databaseUrl` with its host and port replaced by PgBouncer's. */
  through(databaseUrl: string): string;
}

/**
 * Starts Debian's `pgbouncer` (PATH) in transaction mode on a free loopback port, in front of
 * `databaseUrl`'s server, with `serverConnections` server connections per database and user.
 * PgBouncer 1.18 refuses startup parameters it does not know, and node-postgres sends Baton's
 * timeouts as such (and the rate counters' `options=-c synchronous_commit=off`): they are ignored
 * here, and the timeouts set on every server connection instead (Baton's defaults, src/config.ts);
 * the counters' asynchronous commit is lost. Trust authentication, as the local PostgreSQL's.
 * As root it runs as `postgres` (it refuses to run as root). Stopped on cleanup.
 */
export async function startPgBouncer(databaseUrl: string, serverConnections: number, cleanup: Cleanup): Promise<PgBouncer> {
  const upstream = new URL(databaseUrl);
  const user = decodeURIComponent(upstream.username) || 'postgres';
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'baton-fleet-pgbouncer-'));
  cleanup.add(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o755);
  const timeouts = 'SET statement_timeout = 15000; SET lock_timeout = 5000; SET idle_in_transaction_session_timeout = 60000';
  const ini = [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || '5432'} connect_query='${timeouts}'`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'max_client_conn = 2000',
    `default_pool_size = ${serverConnections}`,
    'ignore_startup_parameters = extra_float_digits,options,statement_timeout,lock_timeout,idle_in_transaction_session_timeout',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`);
  await writeFile(join(dir, 'pgbouncer.ini'), ini);
  const asUser = process.getuid?.() === 0 ? ['-u', 'postgres'] : [];
  const child = spawn('pgbouncer', [...asUser, join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4096);
  });
  cleanup.add(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  const through = (url: string) => {
    const next = new URL(url);
    next.hostname = '127.0.0.1';
    next.port = String(port);
    return next.toString();
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with code ${child.exitCode}:\n${output}`);
    const client = new pg.Client({ connectionString: through(databaseUrl) });
    const ok = await client.connect().then(
      () => client.query('SELECT 1').then(() => true),
      () => false,
    );
    await client.end().catch(() => undefined);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not accept connections within 10 s:\n${output}`);
    await sleep(100);
  }
  return { pid: child.pid ?? 0, through };
}

async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
