import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { BatonError } from '../errors.ts';
import type { Ids } from '../ids.ts';
import type { Operation } from '../operations/define-operation.ts';
import { operations } from '../operations/index.ts';
import type { Database } from '../store/database.ts';
import { type Authenticated, authenticate } from './authenticate.ts';
import { type Call, execute, type Outcome } from './execute.ts';
import { executeBatch } from './execute-batch.ts';

export interface Logger {
  error(details: object, message: string): void;
}

/** The one service layer every interface calls. It owns the database; adapters never see it. */
export interface Service {
  readonly operations: readonly Operation[];
  readonly config: Config;
  /** Absolute base URL for links in problems and docs. */
  readonly baseUrl: string;
  /** Resolves the bearer token and counts the request against its rate budget. */
  authenticate(authorization: string | undefined): Promise<Authenticated>;
  execute(operation: Operation, input: unknown, call: Call): Promise<Outcome>;
  /** One read for many ids of its single path parameter (GraphQL's nested fields); see `executeBatch`. */
  executeBatch(operation: Operation, input: Record<string, unknown>, ids: readonly string[], call: Call): Promise<(Outcome | BatonError)[]>;
  /** Throws `unavailable` when the database does not answer. */
  checkReady(): Promise<void>;
}

export interface ServiceDeps {
  readonly database: Database;
  readonly config: Config;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly log: Logger;
}

export function createService(deps: ServiceDeps): Service {
  const { database, config, clock } = deps;
  const baseUrl = config.publicUrl;
  const executeDeps = { db: database.db, clock, ids: deps.ids, config, baseUrl, log: deps.log };
  return {
    operations,
    config,
    baseUrl,
    authenticate: (authorization) => authenticate(database.db, authorization, clock.now(), config.rateLimit),
    execute: (operation, input, call) => execute(executeDeps, operation, input, call),
    executeBatch: (operation, input, ids, call) => executeBatch(executeDeps, operation, input, ids, call),
    async checkReady() {
      try {
        await sql`SELECT 1`.execute(database.db);
      } catch {
        throw new BatonError('unavailable', `The ${database.engine} database did not answer.`, { headers: { 'retry-after': '5' } });
      }
    },
  };
}
