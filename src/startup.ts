import { existsSync } from 'node:fs';
import { lstat, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Config } from './config.ts';
import { parsePostgresHosts } from './postgres-hosts.ts';
import { StartupError } from './startup-error.ts';

/**
 * The one line a first start prints while PGlite creates its data directory (initdb and the
 * migrations take about 20 s), so a silent terminal does not look like a hang. Undefined when the
 * database is PostgreSQL or the data directory already holds a database.
 */
export function embeddedCreationNotice(config: Config): string | undefined {
  if (config.databaseUrl || existsSync(join(config.dataDir, 'PG_VERSION'))) return undefined;
  return `Creating the embedded database in ${resolve(config.dataDir)} (BATON_DATA_DIR), about 20 s the first time...`;
}

interface SystemError {
  readonly code?: unknown;
  readonly syscall?: unknown;
  readonly path?: unknown;
  readonly hostname?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly message?: unknown;
}

/** PostgreSQL error codes (SQLSTATE) a start can meet, each with what to change. */
const POSTGRES_CODES: Record<string, (where: PostgresTarget) => string> = {
  // invalid_catalog_name
  '3D000': (t) =>
    `PostgreSQL at ${t.hostPort} has no database "${t.database}". Create it: createdb -h ${t.host} -p ${t.port}${t.user ? ` -U ${t.user}` : ''} ${t.database} (or point DATABASE_URL at an existing database).`,
  // invalid_password
  '28P01': (t) => `PostgreSQL at ${t.hostPort} refused the password for user "${t.user}". Fix the user or password in DATABASE_URL (now ${t.redacted}).`,
  // invalid_authorization_specification: no such role, or pg_hba.conf rejects the connection
  '28000': (t) => `PostgreSQL at ${t.hostPort} refused user "${t.user}": ${t.message}. Fix the user in DATABASE_URL (now ${t.redacted}) or PostgreSQL's pg_hba.conf.`,
  // insufficient_privilege: the migrations create tables
  '42501': (t) => `PostgreSQL user "${t.user}" may not create Baton's tables in "${t.database}": ${t.message}. Grant it (GRANT CREATE ON SCHEMA public TO ${t.user}) or use another user in DATABASE_URL.`,
  // too_many_connections
  '53300': (t) => `PostgreSQL at ${t.hostPort} has no connection left for Baton: ${t.message}. Lower BATON_DB_POOL_SIZE or raise max_connections (docs/operations.md, connection budget).`,
  // cannot_connect_now: the server is starting up or shutting down
  '57P03': (t) => `PostgreSQL at ${t.hostPort} is not accepting connections yet: ${t.message}. Start Baton again once it is up.`,
};

interface PostgresTarget {
  readonly host: string;
  readonly port: string;
  readonly hostPort: string;
  /** Empty when DATABASE_URL names none (the client then uses the OS user). */
  readonly user: string;
  readonly database: string;
  readonly redacted: string;
  readonly message: string;
}

function postgresTarget(databaseUrl: string, message: string): PostgresTarget {
  // With several hosts, the first names where to look.
  const url = new URL(parsePostgresHosts(databaseUrl).urls[0] ?? databaseUrl);
  const host = decodeURIComponent(url.hostname) || 'localhost';
  const port = url.port || '5432';
  if (url.password) url.password = '***';
  return {
    host,
    port,
    hostPort: `${host}:${port}`,
    user: decodeURIComponent(url.username),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres',
    redacted: url.toString(),
    message,
  };
}

/**
 * Where a first start that does not print to a terminal leaves the bootstrap admin token: beside
 * the data directory (not in it, so `baton backup` never carries it), readable by its owner only.
 */
export function bootstrapTokenFile(config: Config): string {
  return join(dirname(resolve(config.dataDir)), 'bootstrap-admin-token');
}

/**
 * What a first start says about the bootstrap admin token it made. On a terminal: the token, once.
 * Otherwise (a journal, a log collector: output that persists) the token goes to
 * `bootstrapTokenFile` (mode 0600) and the line names the file only. A token the operator chose
 * (BATON_BOOTSTRAP_TOKEN) is never repeated.
 */
export async function bootstrapTokenNotice(token: string, config: Config, terminal: boolean): Promise<string> {
  if (config.bootstrapToken) return '\nBootstrap admin created; its token is the one in BATON_BOOTSTRAP_TOKEN.\n\n';
  if (terminal) return `\nBootstrap admin token (shown once; store it now):\n\n  ${token}\n\n`;
  const file = bootstrapTokenFile(config);
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeNewFile(file, `${token}\n`);
  } catch (error) {
    return (
      `\nThe bootstrap admin token could not be written to ${file} (${(error as Error).message}); it is not printed, as this output is not a terminal.\n` +
      'Mint an admin token with: baton admin-token (docs/operations.md, "Lost admin token").\n\n'
    );
  }
  return (
    `\nBootstrap admin token written to ${file} (readable by this user only; not printed, as this output is not a terminal and may be kept).\n` +
    'Read it, store it, then delete the file. A new admin token any time: baton admin-token (docs/operations.md, "Lost admin token").\n\n'
  );
}

/** Node's codes for a server certificate it could not verify (self-signed, unknown issuer, expired, another host's name). */
const UNTRUSTED_CERTIFICATE = /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|UNABLE_TO_VERIFY_LEAF_SIGNATURE|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * Writes `text` to a file made new at `file`, readable by its owner only, never through what is
 * there already: the directory may be shared (BATON_DATA_DIR=/tmp/baton puts the file in /tmp),
 * where a link planted at the path would take the token elsewhere and a file another user made
 * would keep it readable to them. A regular file of this user's (an earlier first start's) is
 * replaced; anything else is refused (EEXIST), and the caller says so.
 */
async function writeNewFile(file: string, text: string): Promise<void> {
  const old = await lstat(file).catch(() => undefined);
  if (old?.isFile() && old.uid === process.getuid?.()) await unlink(file);
  await writeFile(file, text, { mode: 0o600, flag: 'wx' });
}

/**
 * Where the configured database is, for a line to an operator: the PostgreSQL URL with its
 * password hidden, or the absolute data directory, each with the variable that sets it.
 */
export function databaseLocation(config: Config): string {
  if (config.databaseUrl) return `the PostgreSQL database ${postgresTarget(config.databaseUrl, '').redacted} (DATABASE_URL)`;
  return `${resolve(config.dataDir)} (BATON_DATA_DIR)`;
}

/**
 * Turns a failure to start (open the database, migrate, listen) into one line saying what to
 * change: the variable or file, with the command when there is one. A failure it does not know
 * still gets one line, its message; never a stack trace.
 */
export function explainStartupError(error: unknown, config: Config): string {
  // Already one line for an operator (a held data directory, a database migrated by another version).
  if (error instanceof StartupError) return error.message;
  const e = (typeof error === 'object' && error !== null ? error : {}) as SystemError;
  const message = typeof e.message === 'string' ? e.message : String(error);
  const code = typeof e.code === 'string' ? e.code : undefined;

  // The metrics listener (BATON_METRICS_ADDRESS) starts after the API's: its failures name its variable.
  const metrics = config.metricsAddress;
  if (metrics && metrics.port !== config.port && (e.syscall === 'listen' || e.syscall === 'bind') && e.port === metrics.port) {
    const at = `${metrics.host}:${metrics.port}`;
    if (code === 'EADDRINUSE') return `Port ${metrics.port} on ${metrics.host} (BATON_METRICS_ADDRESS) is already in use. Set BATON_METRICS_ADDRESS to a free port (example: BATON_METRICS_ADDRESS=${metrics.host}:${metrics.port + 1}) or stop the other process.`;
    return `Cannot serve /metrics on ${at}: ${message}. Set BATON_METRICS_ADDRESS to an address and port of this machine (example: BATON_METRICS_ADDRESS=127.0.0.1:9464).`;
  }
  if (e.syscall === 'listen' || e.syscall === 'bind') {
    if (code === 'EADDRINUSE') return `Port ${config.port} on ${config.host} is already in use (another Baton?). Set PORT to a free port (example: PORT=${config.port + 1}) or stop the other process.`;
    if (code === 'EACCES') return `Not allowed to listen on port ${config.port}: ports below 1024 need privileges. Set PORT to 1024 or above (example: PORT=3000) and put a reverse proxy in front.`;
    if (code === 'EADDRNOTAVAIL') return `This machine has no address ${config.host} to listen on. Set HOST to one of its addresses (example: HOST=127.0.0.1 or HOST=0.0.0.0).`;
    return `Cannot listen on ${config.host}:${config.port}: ${message}. Check HOST and PORT.`;
  }

  // Listening resolves HOST first; a name no resolver knows fails there, before any socket.
  if (e.syscall === 'getaddrinfo' && e.hostname === config.host && (code === 'ENOTFOUND' || code === 'EAI_AGAIN')) {
    return `HOST ${config.host} does not resolve to an address of this machine. Set HOST to an address or name it has (example: HOST=127.0.0.1, or HOST=0.0.0.0 for every interface).`;
  }

  if (config.databaseUrl) {
    const target = postgresTarget(config.databaseUrl, message);
    if (code === 'ECONNREFUSED') return `Cannot connect to PostgreSQL at ${target.hostPort}: connection refused. Start PostgreSQL there, or set DATABASE_URL to where it runs (now ${target.redacted}).`;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `Cannot connect to PostgreSQL: host "${target.host}" not found. Fix the host in DATABASE_URL (now ${target.redacted}).`;
    if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `Cannot reach PostgreSQL at ${target.hostPort} (${code}). Check the network or DATABASE_URL (now ${target.redacted}).`;
    const postgres = code ? POSTGRES_CODES[code] : undefined;
    if (postgres) return postgres(target);
    // node-postgres gives these no code, only its message.
    if (/connection timeout/i.test(message)) {
      return `PostgreSQL at ${target.hostPort} did not answer within ${config.dbTimeouts.connectMs} ms (BATON_DB_CONNECT_TIMEOUT_MS). Check that PostgreSQL runs there and that a firewall lets this machine reach it, or set DATABASE_URL to where it runs (now ${target.redacted}).`;
    }
    if (/terminated unexpectedly/i.test(message)) {
      return `PostgreSQL at ${target.hostPort} closed the connection before Baton could log in: check that the port in DATABASE_URL is PostgreSQL's, not another service's (now ${target.redacted}), and PostgreSQL's log.`;
    }
    if (code !== undefined && UNTRUSTED_CERTIFICATE.test(code)) {
      return (
        `PostgreSQL at ${target.hostPort} offers SSL, but its certificate is not trusted here (${code}). node-postgres checks it with any sslmode but disable and no-verify, ` +
        `as libpq's verify-full does: add sslrootcert=/path/to/ca.pem (the CA that signed it; a managed PostgreSQL publishes its own) to DATABASE_URL, or uselibpqcompat=true for libpq's meaning of sslmode=require (encrypted, the certificate not checked) (now ${target.redacted}).`
      );
    }
    if (/does not support SSL/i.test(message)) {
      return `PostgreSQL at ${target.hostPort} does not offer SSL, and DATABASE_URL asks for it: remove sslmode from DATABASE_URL (now ${target.redacted}), or turn ssl on in PostgreSQL.`;
    }
    return `PostgreSQL at ${target.hostPort} (DATABASE_URL) failed: ${message}`;
  }

  const dir = resolve(config.dataDir);
  if (typeof e.path === 'string' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'EEXIST') {
    const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way of the directory' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'read-only file system' : message;
    return `Cannot use the embedded database directory ${dir}: ${why}. Set BATON_DATA_DIR to a directory this user can write (example: BATON_DATA_DIR=.baton/data).`;
  }
  if (/PGlite/i.test(message) || /Aborted/i.test(message)) {
    return `The embedded database in ${dir} (BATON_DATA_DIR) cannot be opened: it is not a Baton data directory, or it is damaged (${message}). Set BATON_DATA_DIR to a new directory, or restore a backup into it (baton restore, docs/operations.md).`;
  }
  return `Baton could not start: ${message}`;
}
