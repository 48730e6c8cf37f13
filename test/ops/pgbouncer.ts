import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../cli/run-baton.ts';

/** PgBouncer in front of one PostgreSQL server. */
export interface PgBouncer {
  readonly pid: number;
  /** `databaseUrl` with its host and port replaced by PgBouncer's. */
  through(databaseUrl: string): string;
  stop(): Promise<void>;
}

/**
 * Starts Debian's `pgbouncer` (PATH) in transaction mode on a free loopback port, in front of
 * `databaseUrl`'s server, with `serverConnections` server connections per database and user.
 * PgBouncer 1.18 refuses startup parameters it does not know, and node-postgres sends Baton's
 * timeouts as such (and the rate counters' `options=-c synchronous_commit=off`): they are ignored
 * here, and the timeouts set on every server connection instead (Baton's defaults, src/config.ts);
 * the counters' asynchronous commit is lost (docs/operations.md, "PgBouncer"). Trust
 * authentication, as the local PostgreSQL's. As root it runs as `postgres` (it refuses root).
 */
export async function startPgBouncer(databaseUrl: string, serverConnections: number): Promise<PgBouncer> {
  const upstream = new URL(databaseUrl);
  const user = decodeURIComponent(upstream.username) || 'postgres';
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'baton-pgbouncer-'));
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
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  const through = (url: string) => {
    const next = new URL(url);
    next.hostname = '127.0.0.1';
    next.port = String(port);
    return next.toString();
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`pgbouncer exited with code ${child.exitCode}:\n${output}`);
    }
    const client = new pg.Client({ connectionString: through(databaseUrl) });
    const ok = await client.connect().then(
      () => client.query('SELECT 1').then(() => true),
      () => false,
    );
    await client.end().catch(() => undefined);
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not accept connections within 10 s:\n${output}`);
    }
    await sleep(100);
  }
  return { pid: child.pid ?? 0, through, stop };
}
