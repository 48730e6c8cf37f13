import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './adapters/rest/app.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { createIds } from './ids.ts';
import { readVersion } from './version.ts';
import { mintAdminToken, type MintedAdminToken } from './service/admin-token.ts';
import { archiveEvents, type ArchiveReport } from './service/archive-events.ts';
import { bootstrapAdmin } from './service/bootstrap.ts';
import { startEventTail } from './service/event-tail.ts';
import { embeddedSecretKey } from './service/secret-key.ts';
import { createService, type Service } from './service/service.ts';
import { StartupError } from './startup-error.ts';
import { workspaceIds } from './store/workspace-scope.ts';
import { databaseLocation } from './startup.ts';
import { countAgents } from './store/agents.ts';
import { type Database, openPglite, openPostgres } from './store/database.ts';
import { isMigrated, migrate } from './store/migrate.ts';
import { runMaintenance, startMaintenanceLoops } from './workers/maintenance.ts';
import { startWebhookDelivery } from './workers/deliver-webhooks.ts';
import { type Loop, startLoop } from './workers/loop.ts';
import { backgroundFailures } from './workers/background-failures.ts';
import { readCursorKey } from './store/server-keys.ts';
import { startTracing, type Tracing } from './tracing.ts';
import { analyzeChangedTables } from './store/statistics.ts';

/** How often PGlite's tables are checked for changes that call for fresh statistics (autovacuum's own nap is a minute). */
const ANALYZE_INTERVAL_MS = 30_000;

/** How long closing waits for in-flight requests before it drops the remaining connections. */
const CLOSE_GRACE_MS = 2000;

export interface Server {
  readonly app: FastifyInstance;
  /** /metrics alone, open, for BATON_METRICS_ADDRESS (main.ts listens there); undefined when it is not set. */
  readonly metricsApp: FastifyInstance | undefined;
  readonly service: Service;
  readonly database: Database;
  /** The bootstrap admin token, only when this start created the first principal. */
  readonly bootstrapToken: string | undefined;
  close(): Promise<void>;
}

export interface ServerOptions {
  readonly logger?: Logger;
  readonly clock?: Clock;
  /** An already-open database (tests); otherwise opened from the config. */
  readonly database?: Database;
  /**
   * Tracing already started from `config.tracing` (tests, so an already-open database traces its
   * statements); otherwise started here. Either way the server shuts it down on close.
   */
  readonly tracing?: Tracing;
}

function openDatabase(config: Config, log?: Pick<Logger, 'warn'>, tracing?: Tracing): Promise<Database> | Database {
  if (!config.databaseUrl) return openPglite({ dataDir: config.dataDir, trace: tracing?.query });
  return openPostgres(config.databaseUrl, config.dbPoolSize, {
    trace: tracing?.query,
    timeouts: config.dbTimeouts,
    preparedStatements: config.dbPreparedStatements,
    replicaUrl: config.readReplica?.url,
    listenUrl: config.listenUrl,
    onConnectionError: (err) => log?.warn({ err }, 'a database connection failed; the pool replaces it'),
  });
}

/** Applies pending migrations to the configured database and closes it. */
export async function migrateDatabase(config: Config): Promise<string[]> {
  const database = await openDatabase(config);
  try {
    return await migrate(database);
  } finally {
    await database.close();
  }
}

/**
 * `baton admin-token`: mints a new admin token straight in the configured database, migrating it
 * if needed. Refuses (a `StartupError` saying where it looked) a database no server has started
 * on: a missing data directory, one holding no database, a database without Baton's schema or
 * without principals. It never creates one, since no server would accept a token minted there.
 */
export async function mintAdminTokenDirectly(config: Config): Promise<MintedAdminToken> {
  const where = databaseLocation(config);
  const setting = config.databaseUrl ? 'DATABASE_URL' : 'BATON_DATA_DIR';
  const refuse = (what: string) =>
    new StartupError(`${what}; baton admin-token mints a token in the database a server already uses and never creates one. Set ${setting} as the server has it.`);
  if (!config.databaseUrl && !existsSync(join(config.dataDir, 'PG_VERSION'))) {
    throw refuse(`There is no database in ${where}${existsSync(config.dataDir) ? '' : ': no such directory'}`);
  }
  const database = await openDatabase(config);
  try {
    if (!(await isMigrated(database))) throw refuse(`${where} holds no Baton database (no baton_migrations table)`);
    if ((await countAgents(database.db)) === 0) throw refuse(`${where} has no principals: no Baton server has started on it (a first start prints the bootstrap admin token)`);
    await migrate(database);
    return await mintAdminToken(database.db, { clock: systemClock, ids: createIds() });
  } finally {
    await database.close();
  }
}

/**
 * `baton archive-events`: migrates if needed, then moves events created before `before` into
 * `write` (JSON lines) and deletes them (see `archiveEvents`).
 */
export async function archiveEventsDirectly(
  config: Config,
  args: { before: Date; file: string; write: (lines: string) => Promise<void>; workspaceId?: string },
): Promise<ArchiveReport> {
  const database = await openDatabase(config);
  try {
    await migrate(database);
    if (args.workspaceId !== undefined && !(await workspaceIds(database.db)).includes(args.workspaceId)) {
      throw new StartupError(`No workspace ${args.workspaceId} on this server: baton workspaces list shows yours.`);
    }
    return await archiveEvents(database.db, { ...args, clock: systemClock });
  } finally {
    await database.close();
  }
}

/** `baton backup`: the embedded database as one tar file (PGlite's own dump of its data directory). */
export async function backupEmbedded(config: Config): Promise<Uint8Array> {
  const database = await openPglite({ dataDir: config.dataDir });
  try {
    return new Uint8Array(await (await database.dump()).arrayBuffer());
  } finally {
    await database.close();
  }
}

/** `baton restore`: loads a `baton backup` file into the (new, empty) data directory and migrates it to this version. */
export async function restoreEmbedded(config: Config, backup: Uint8Array): Promise<string[]> {
  const database = await openPglite({ dataDir: config.dataDir, loadDataDir: new Blob([backup as Uint8Array<ArrayBuffer>]) });
  try {
    return await migrate(database);
  } finally {
    await database.close();
  }
}

/** Composes config → database (migrated) → service → HTTP app. Does not listen. */
export async function createServer(given: Config, options: ServerOptions = {}): Promise<Server> {
  const version = readVersion();
  const tracing = options.tracing ?? (await startTracing(given.tracing, version));
  const database = options.database ?? (await openDatabase(given, options.logger, tracing));
  // Embedded mode needs no configuration: its secret key is made once and kept in the data dir.
  const config = given.secretKey || given.databaseUrl || options.database ? given : { ...given, secretKey: await embeddedSecretKey(given.dataDir) };
  await migrate(database, { log: options.logger });
  const cursorKey = await readCursorKey(database.db);
  const clock = options.clock ?? systemClock;
  const ids = createIds();
  const bootstrapToken = await bootstrapAdmin(database.db, { clock, ids, token: config.bootstrapToken });
  const log = options.logger ?? { error: () => undefined, warn: () => undefined };
  const failed = backgroundFailures(log, clock);
  const tail = startEventTail(database, (err) => failed(err, {}, 'reading the event tail failed'));
  // Set once the webhook worker runs; the service tells it what each write committed.
  let committed: (events: readonly { type: string }[]) => void = () => undefined;
  const service = createService({ database, config, clock, ids, log, tail, cursorKey, tracing, onCommit: (events) => committed(events) });
  const maintenanceDeps = { db: database.db, clock, ids, config, log, tracing, service, failed };
  const maintenance = () => runMaintenance(maintenanceDeps);
  const { app, metricsApp } = await buildApp(service, { ...(options.logger ? { logger: options.logger } : {}), runMaintenance: maintenance, version });
  const workers: Loop[] = [];
  if (config.sweepIntervalMs > 0) {
    workers.push(...startMaintenanceLoops(maintenanceDeps));
    // PostgreSQL's autovacuum keeps its statistics; PGlite has none, and no statistics make bad plans (src/store/statistics.ts).
    if (database.engine === 'pglite') workers.push(startLoop(ANALYZE_INTERVAL_MS, () => analyzeChangedTables(database.db), (err) => failed(err, {}, 'analyze failed')));
  }
  if (config.webhookIntervalMs > 0) {
    const delivery = startWebhookDelivery(database.db, tail, { clock, ids, config, tracing, onError: (err) => failed(err, {}, 'webhook delivery failed') });
    committed = (events) => delivery.committed(events);
    workers.push(delivery);
  }
  return {
    app,
    metricsApp,
    service,
    database,
    bootstrapToken,
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      await metricsApp?.close();
      // Ends every open stream first, so closing the HTTP server does not wait on them.
      await tail.close();
      // In-flight requests get a grace period; then connections a client keeps busy are dropped.
      const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
      await app.close();
      clearTimeout(force);
      await database.close();
      // Last, so the spans of everything above are exported before the process exits.
      await tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'exporting the last spans failed'));
    },
  };
}
