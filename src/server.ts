import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './adapters/rest/app.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { createIds } from './ids.ts';
import { bootstrapAdmin } from './service/bootstrap.ts';
import { createService, type Service } from './service/service.ts';
import { type Database, openPglite, openPostgres } from './store/database.ts';
import { migrate } from './store/migrate.ts';

export interface Server {
  readonly app: FastifyInstance;
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
}

/** Composes config → database (migrated) → service → HTTP app. Does not listen. */
export async function createServer(config: Config, options: ServerOptions = {}): Promise<Server> {
  const database = options.database ?? (config.databaseUrl ? openPostgres(config.databaseUrl, config.dbPoolSize) : await openPglite({ dataDir: config.dataDir }));
  await migrate(database);
  const clock = options.clock ?? systemClock;
  const ids = createIds();
  const bootstrapToken = await bootstrapAdmin(database.db, { clock, ids, token: config.bootstrapToken });
  const log = options.logger ?? { error: () => undefined };
  const service = createService({ database, config, clock, ids, log });
  const app = await buildApp(service, options.logger ? { logger: options.logger } : {});
  return {
    app,
    service,
    database,
    bootstrapToken,
    async close() {
      await app.close();
      await database.close();
    },
  };
}
