import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWellFormedToken } from '../../src/tokens.ts';
import { engine, freshDatabase, runsEngineFree } from '../harness.ts';
import { databaseUrl } from '../postgres-url.ts';
import { runBaton } from './run-baton.ts';
import { startReplicatedPostgres } from '../ops/replicated-postgres.ts';

/**
 * A first run that explains itself: each failure to start is one line naming what to change, a
 * non-zero exit, and no stack trace. The real process, as a new user starts it.
 */

let scratch: string;
let busy: NetServer;
let busyPort: number;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'baton-startup-'));
  busy = createNetServer();
  busy.listen(0, '127.0.0.1');
  await once(busy, 'listening');
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  busy.close();
  await rm(scratch, { recursive: true, force: true });
});

function expectOneLine(stderr: string) {
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe.skipIf(engine !== 'pglite')('embedded database', { timeout: 120_000 }, () => {
  it('says once that it is creating the database, then names PORT when the port is taken, and still hands over the bootstrap token', { timeout: 120_000 }, async () => {
    const dataDir = join(scratch, 'first-run');
    const { code, stdout, stderr } = await runBaton(['serve'], { BATON_DATA_DIR: dataDir, PORT: String(busyPort), BATON_LOG_LEVEL: 'silent' });
    expect(stdout.startsWith(`Creating the embedded database in ${dataDir} (BATON_DATA_DIR), about 20 s the first time...\n`), stdout).toBe(true);
    expect(stderr).toBe(`Port ${busyPort} on 127.0.0.1 is already in use (another Baton?). Set PORT to a free port (example: PORT=${busyPort + 1}) or stop the other process.\n`);
    expect(code).toBe(1);
    // The first admin was made before the port failed: its token is handed over now, as on a start that serves.
    const tokenFile = join(scratch, 'bootstrap-admin-token');
    expect(stdout).toContain(`Bootstrap admin token written to ${tokenFile} `);
    expect(isWellFormedToken((await readFile(tokenFile, 'utf8')).trim())).toBe(true);
    // Owner only: PGlite leaves some of its files writable by anyone.
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    // The second start finds the database: no creation line. A directory an earlier release left open is narrowed.
    await chmod(dataDir, 0o755);
    const again = await runBaton(['serve'], { BATON_DATA_DIR: dataDir, PORT: String(busyPort), BATON_LOG_LEVEL: 'silent' });
    expect(again.stdout).toBe('');
    expect(again.code).toBe(1);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    // baton restore never overwrites a database.
    const restore = await runBaton(['restore', join(scratch, 'any.tar')], { BATON_DATA_DIR: dataDir });
    expect(restore.stderr).toBe(`error: ${dataDir} (BATON_DATA_DIR) already holds a database: move it aside or point BATON_DATA_DIR at a new directory.\n`);
    expect(restore.code).toBe(2);
  });

  it('names BATON_DATA_DIR when a file stands where the data directory should be', async () => {
    const file = join(scratch, 'a-file');
    await writeFile(file, 'not a directory');
    const { code, stderr } = await runBaton(['serve'], { BATON_DATA_DIR: join(file, 'data'), PORT: '0' });
    expect(stderr).toBe(
      `Cannot use the embedded database directory ${join(file, 'data')}: a file is in the way of the directory. Set BATON_DATA_DIR to a directory this user can write (example: BATON_DATA_DIR=.baton/data).\n`,
    );
    expect(code).toBe(1);
  });

  it('names BATON_DATA_DIR when the directory holds no database it can open', async () => {
    const dataDir = join(scratch, 'damaged');
    await mkdir(dataDir);
    await writeFile(join(dataDir, 'PG_VERSION'), 'garbage\n');
    const { code, stderr } = await runBaton(['serve'], { BATON_DATA_DIR: dataDir, PORT: '0' });
    expectOneLine(stderr);
    expect(stderr).toContain(`The embedded database in ${dataDir} (BATON_DATA_DIR) cannot be opened: it is not a Baton data directory, or it is damaged`);
    expect(stderr).toContain('restore a backup into it (baton restore, docs/operations.md)');
    expect(code).toBe(1);
  });
});

describe.skipIf(engine !== 'postgres')('PostgreSQL', { timeout: 120_000 }, () => {
  const serverUrl = process.env.BATON_TEST_DATABASE_URL ?? '';

  it('names DATABASE_URL when the connection is refused', async () => {
    const { code, stdout, stderr } = await runBaton(['serve'], { DATABASE_URL: 'postgres://baton:secret@127.0.0.1:1/baton', PORT: '0' });
    expect(stderr).toBe(
      'Cannot connect to PostgreSQL at 127.0.0.1:1: connection refused. Start PostgreSQL there, or set DATABASE_URL to where it runs (now postgres://baton:***@127.0.0.1:1/baton).\n',
    );
    expect(stdout).toBe('');
    expect(code).toBe(1);
  });

  it('gives the createdb line when the database does not exist', async () => {
    const url = new URL(databaseUrl(serverUrl, 'baton_no_such_database'));
    const { code, stderr } = await runBaton(['serve'], { DATABASE_URL: url.toString(), PORT: '0' });
    const user = url.username ? ` -U ${url.username}` : '';
    expect(stderr).toBe(
      `PostgreSQL at ${url.hostname}:${url.port || '5432'} has no database "baton_no_such_database". Create it: createdb -h ${url.hostname} -p ${url.port || '5432'}${user} baton_no_such_database (or point DATABASE_URL at an existing database).\n`,
    );
    expect(code).toBe(1);
  });

  it('names the user in DATABASE_URL when PostgreSQL refuses it', async () => {
    const url = new URL(serverUrl);
    url.username = 'baton_no_such_role';
    url.password = '';
    const { code, stderr } = await runBaton(['serve'], { DATABASE_URL: url.toString(), PORT: '0' });
    expectOneLine(stderr);
    expect(stderr).toMatch(/^PostgreSQL at \S+ refused (user|the password for user) "baton_no_such_role"/);
    expect(stderr).toContain('DATABASE_URL');
    expect(code).toBe(1);
  });

  it('points baton backup at pg_dump on PostgreSQL', async () => {
    const { code, stderr } = await runBaton(['backup', 'x.tar'], { DATABASE_URL: serverUrl });
    expect(stderr).toBe('error: baton backup is for the embedded database; with DATABASE_URL use PostgreSQL\'s own tools: pg_dump --format=custom --file=baton.dump "$DATABASE_URL"\n');
    expect(code).toBe(2);
  });

  it('names PORT when the port is taken, and leaves the database closed', async () => {
    const { database, url } = await freshDatabase();
    await database.close();
    const { code, stderr } = await runBaton(['serve'], { DATABASE_URL: url ?? '', PORT: String(busyPort), BATON_LOG_LEVEL: 'silent' });
    expect(stderr).toBe(`Port ${busyPort} on 127.0.0.1 is already in use (another Baton?). Set PORT to a free port (example: PORT=${busyPort + 1}) or stop the other process.\n`);
    expect(code).toBe(1);
  });

  it('says how to trust a self-signed certificate that sslmode=require meets, and connects with uselibpqcompat=true (libpq\'s require)', { timeout: 120_000 }, async () => {
    const server = await startReplicatedPostgres({ selfSignedTls: true });
    try {
      const url = `${server.hostUrl(server.primaryPort, 'postgres')}?sslmode=require`;
      const refused = await runBaton(['serve'], { DATABASE_URL: url, PORT: String(busyPort), BATON_LOG_LEVEL: 'silent' });
      // node-postgres warns first, once, that its sslmode=require means verify-full: its own words, then Baton's line.
      expect(refused.stderr).toContain('SECURITY WARNING');
      expect(refused.stderr.trim().split('\n').at(-1)).toMatch(/^PostgreSQL at 127\.0\.0\.1:\d+ offers SSL, but its certificate is not trusted here \(DEPTH_ZERO_SELF_SIGNED_CERT\)\. .*sslrootcert=.*uselibpqcompat=true/);
      expect(refused.code).toBe(1);
      // Encrypted without checking the certificate: it migrates, then stops at the busy port.
      const started = await runBaton(['serve'], { DATABASE_URL: `${url}&uselibpqcompat=true`, PORT: String(busyPort), BATON_LOG_LEVEL: 'silent' });
      expect(started.stderr).toBe(`Port ${busyPort} on 127.0.0.1 is already in use (another Baton?). Set PORT to a free port (example: PORT=${busyPort + 1}) or stop the other process.\n`);
    } finally {
      await server.destroy();
    }
  });

  it('names BATON_METRICS_ADDRESS, not PORT, when the metrics port is taken', async () => {
    const { database, url } = await freshDatabase();
    await database.close();
    const { code, stderr } = await runBaton(['serve'], { DATABASE_URL: url ?? '', PORT: '0', BATON_METRICS_ADDRESS: `127.0.0.1:${busyPort}`, BATON_LOG_LEVEL: 'silent' });
    expect(stderr).toBe(`Port ${busyPort} on 127.0.0.1 (BATON_METRICS_ADDRESS) is already in use. Set BATON_METRICS_ADDRESS to a free port (example: BATON_METRICS_ADDRESS=127.0.0.1:${busyPort + 1}) or stop the other process.\n`);
    expect(code).toBe(1);
  });
});

describe.skipIf(!runsEngineFree)('start-up errors any engine gives (once: on PostgreSQL where it is configured)', () => {
  it('names DATABASE_URL when it is not a PostgreSQL URL (mysql://, http://), exit 2', async () => {
    for (const scheme of ['mysql', 'http']) {
      const { code, stdout, stderr } = await runBaton(['serve'], { DATABASE_URL: `${scheme}://baton@db.example/baton`, PORT: '0' });
      expect(stderr).toBe(
        `Invalid configuration: DATABASE_URL: must be a PostgreSQL URL (postgres://…), not ${scheme}://; Baton keeps its data only in PostgreSQL, or unset DATABASE_URL for the embedded database (example: DATABASE_URL=postgres://baton@127.0.0.1:5432/baton)\n`,
      );
      expect(stdout).toBe('');
      expect(code).toBe(2);
    }
  });

  it.each([
    ['BATON_DATABASE_REPLICA_URL', /the embedded database has no replica/],
    ['BATON_DATABASE_LISTEN_URL', /it is the direct address of the database DATABASE_URL reaches through a pooler/],
  ])('refuses %s on the embedded database in one line, exit 2', async (name, why) => {
    const dataDir = join(scratch, `no-${name}`);
    const { code, stdout, stderr } = await runBaton(['serve'], { [name]: 'postgres://baton@db2:5432/baton', BATON_DATA_DIR: dataDir, PORT: '0' });
    expect(stderr).toMatch(new RegExp(`^Invalid configuration: ${name} needs DATABASE_URL: [^\\n]+ \\(example: [^\\n]+\\)\\n$`));
    expect(stderr).toMatch(why);
    expect(stdout).toBe('');
    expect(code).toBe(2);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('names HOST when it does not resolve, before opening any database, exit 1', async () => {
    const dataDir = join(scratch, 'never-created');
    const { code, stdout, stderr } = await runBaton(['serve'], { HOST: 'no-such-host.invalid', BATON_DATA_DIR: dataDir, PORT: '0', BATON_LOG_LEVEL: 'silent' });
    expect(stderr).toBe('HOST no-such-host.invalid does not resolve to an address of this machine. Set HOST to an address or name it has (example: HOST=127.0.0.1, or HOST=0.0.0.0 for every interface).\n');
    expect(code).toBe(1);
    expect(stdout).toBe('');
    await expect(stat(dataDir)).rejects.toThrow();
  });

  it('says what to check when PostgreSQL does not answer, closes the connection, or offers no SSL, exit 1', async () => {
    // Stand-ins on loopback: one that accepts and never answers (a firewall that drops), one that
    // hangs up at the first byte (not PostgreSQL), one that refuses SSL as PostgreSQL does ('N').
    const behaviours = {
      silent: () => undefined,
      hangsUp: (socket: Socket) => socket.once('data', () => socket.destroy()),
      noSsl: (socket: Socket) => socket.once('data', () => socket.end('N')),
    };
    const servers = await Promise.all(
      Object.values(behaviours).map(async (behaviour) => {
        const server = createNetServer((socket) => {
          socket.on('error', () => undefined);
          behaviour(socket);
        });
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        return server;
      }),
    );
    try {
      const [silent, hangsUp, noSsl] = servers.map((server) => (server.address() as { port: number }).port);
      const cases = [
        [{ DATABASE_URL: `postgres://baton:secret@127.0.0.1:${silent}/baton`, BATON_DB_CONNECT_TIMEOUT_MS: '500' }, `PostgreSQL at 127.0.0.1:${silent} did not answer within 500 ms (BATON_DB_CONNECT_TIMEOUT_MS). Check that PostgreSQL runs there and that a firewall lets this machine reach it, or set DATABASE_URL to where it runs (now postgres://baton:***@127.0.0.1:${silent}/baton).`],
        [{ DATABASE_URL: `postgres://baton@127.0.0.1:${hangsUp}/baton` }, `PostgreSQL at 127.0.0.1:${hangsUp} closed the connection before Baton could log in: check that the port in DATABASE_URL is PostgreSQL's, not another service's (now postgres://baton@127.0.0.1:${hangsUp}/baton), and PostgreSQL's log.`],
        [{ DATABASE_URL: `postgres://baton@127.0.0.1:${noSsl}/baton?sslmode=verify-full` }, `PostgreSQL at 127.0.0.1:${noSsl} does not offer SSL, and DATABASE_URL asks for it: remove sslmode from DATABASE_URL (now postgres://baton@127.0.0.1:${noSsl}/baton?sslmode=verify-full), or turn ssl on in PostgreSQL.`],
      ] as const;
      for (const [env, line] of cases) {
        const { code, stdout, stderr } = await runBaton(['serve'], { ...env, PORT: '0', BATON_LOG_LEVEL: 'silent' });
        expect(stderr).toBe(`${line}\n`);
        expect(stdout).toBe('');
        expect(code).toBe(1);
      }
    } finally {
      for (const server of servers) server.close();
    }
  });

  it('names the restore file when it does not exist, exit 2', async () => {
    const missing = join(scratch, 'no-such-backup.tar');
    const { code, stderr } = await runBaton(['restore', missing], { BATON_DATA_DIR: join(scratch, 'restore-target') });
    expect(stderr).toBe(`error: No backup file ${missing}: give the path of a file written by baton backup.\n`);
    expect(code).toBe(2);
  });
});
