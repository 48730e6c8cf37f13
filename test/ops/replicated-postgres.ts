import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../cli/run-baton.ts';

const run = promisify(execFile);

/**
 * A PostgreSQL primary and, once added, a streaming standby, made from this machine's installation
 * (/usr/lib/postgresql/<version>/bin) in a temporary directory, on free loopback ports, with
 * trust authentication. Commits wait for the standby (`synchronous_commit = on` with the standby
 * named in `synchronous_standby_names`), so a write the primary acknowledged is on the standby.
 * Small and unsafe on purpose by default (fsync off, 16 MB of shared buffers): a crash of the
 * machine is not what the tests simulate; bench/fleet.ts's failover asks for an operator's settings.
 *
 * PostgreSQL refuses to run as root: under root every command runs as the `postgres` OS user
 * (runuser), which then owns the directory.
 */
export interface ReplicatedPostgres {
  readonly primaryPort: number;
  readonly standbyPort: number;
  /** `postgres://postgres@127.0.0.1:<primary>,127.0.0.1:<standby>/<database>?target_session_attrs=read-write` */
  readonly url: (database: string) => string;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`: one server of the pair, for a client that must reach that one. */
  readonly hostUrl: (port: number, database: string) => string;
  /**
   * Makes the standby from a base backup of the running primary (`pg_basebackup -R` with a
   * replication slot), starts it, names it in the primary's `synchronous_standby_names`, and
   * resolves once the primary reports it synchronous: from then on every commit waits for it.
   */
  addSynchronousStandby(): Promise<void>;
  /** Stops the primary at once (`pg_ctl stop -m immediate`): its sessions end as in a crash. */
  stopPrimary(): Promise<void>;
  /** Stops the standby at once (`pg_ctl stop -m immediate`). */
  stopStandby(): Promise<void>;
  /** Promotes the standby (`pg_ctl promote`) and resolves once it takes writes. */
  promoteStandby(): Promise<void>;
  /** Stops both servers and removes their directory. */
  destroy(): Promise<void>;
}

const STANDBY_NAME = 'baton_standby';

/** The bin directory of the newest PostgreSQL installed; throws (the test fails) when there is none. */
async function postgresBin(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? (await readdir(root)).filter((v) => existsSync(join(root, v, 'bin', 'pg_basebackup'))) : [];
  const newest = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  if (!newest) throw new Error(`No PostgreSQL installation with initdb and pg_basebackup under ${root}: install postgresql (Debian) to run the failover test`);
  return join(root, newest, 'bin');
}

export interface ReplicatedPostgresOptions {
  /** `shared_buffers` of both servers; 16MB by default (a test's few rows), PostgreSQL's own 128MB for a benchmark's fleet. */
  readonly sharedBuffers?: string;
  /** fsync and full-page writes on, as an operator's server has them (a benchmark); off by default. */
  readonly durable?: boolean;
  /** SSL on, with a self-signed certificate for `localhost` made by `openssl` (no CA trusts it). */
  readonly selfSignedTls?: boolean;
}

export async function startReplicatedPostgres(options: ReplicatedPostgresOptions = {}): Promise<ReplicatedPostgres> {
  const bin = await postgresBin();
  const asRoot = userInfo().uid === 0;
  const dir = await mkdtemp(join(tmpdir(), 'baton-failover-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (tool: string, args: readonly string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), [...args]));
  const primary = join(dir, 'primary');
  const standby = join(dir, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const running = new Set<string>();
  const start = async (data: string) => {
    await pg('pg_ctl', ['-D', data, '-l', `${data}.log`, '-w', '-t', '60', 'start']);
    running.add(data);
  };
  const stop = async (data: string) => {
    if (!running.delete(data)) return;
    await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  };
  const destroy = async () => {
    await Promise.allSettled([stop(primary), stop(standby)]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await pg('initdb', ['-D', primary, '-A', 'trust', '-U', 'postgres', '--no-sync', '--no-instructions', '-E', 'UTF8', '--locale=C']);
    await appendFile(
      join(primary, 'postgresql.conf'),
      [
        `port = ${primaryPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        `shared_buffers = ${options.sharedBuffers ?? '16MB'}`,
        `fsync = ${options.durable ? 'on' : 'off'}`,
        `full_page_writes = ${options.durable ? 'on' : 'off'}`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'synchronous_commit = on',
        '',
      ].join('\n'),
    );
    await appendFile(join(primary, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    if (options.selfSignedTls) await selfSignedCertificate(primary, asRoot);
    await start(primary);
  } catch (error) {
    await destroy();
    throw error;
  }
  return {
    primaryPort,
    standbyPort,
    url: (database) => `postgres://postgres@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${database}?target_session_attrs=read-write`,
    hostUrl: (port, database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async addSynchronousStandby() {
      // -R writes the standby's primary_conninfo; -C -S makes the slot that keeps the WAL it needs.
      await pg('pg_basebackup', ['-d', `host=127.0.0.1 port=${primaryPort} user=postgres application_name=${STANDBY_NAME}`, '-D', standby, '-R', '-C', '-S', 'baton_standby_slot', '--checkpoint=fast', '--no-sync']);
      await appendFile(join(standby, 'postgresql.conf'), `port = ${standbyPort}\n`);
      await start(standby);
      // Set after the base backup, so the standby, once promoted, waits for no standby of its own.
      await adminQuery(primaryPort, `ALTER SYSTEM SET synchronous_standby_names = '${STANDBY_NAME}'`, 'SELECT pg_reload_conf()');
      await untilSynchronous(primaryPort);
    },
    stopPrimary: () => stop(primary),
    stopStandby: () => stop(standby),
    async promoteStandby() {
      await pg('pg_ctl', ['-D', standby, '-w', '-t', '60', 'promote']);
    },
    destroy,
  };
}

async function adminQuery(port: number, ...statements: string[]): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    let rows: pg.QueryResultRow[] = [];
    for (const statement of statements) rows = (await client.query<pg.QueryResultRow>(statement)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

/**
 * Polls the primary, as `pg_ctl -w` polls a starting server: the standby turns synchronous once
 * it has connected and the primary has re-read its configuration, which no call waits for.
 */
async function untilSynchronous(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await adminQuery(port, "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'")).length === 0) {
    if (Date.now() > deadline) throw new Error('The standby did not become synchronous within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Turns SSL on in the server at `data` with a new self-signed certificate (its key owned by the server's user, as PostgreSQL insists). */
async function selfSignedCertificate(data: string, asRoot: boolean): Promise<void> {
  const [key, certificate] = [join(data, 'server.key'), join(data, 'server.crt')];
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', certificate, '-days', '2', '-subj', '/CN=localhost']);
  if (asRoot) {
    const { uid, gid } = await stat(data);
    await Promise.all([chown(key, uid, gid), chown(certificate, uid, gid)]);
  }
  await run('chmod', ['0600', key]);
  await appendFile(join(data, 'postgresql.conf'), 'ssl = on\n');
}
