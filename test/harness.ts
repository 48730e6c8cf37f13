import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';
import type { Clock } from '../src/clock.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { SCOPES, type PrincipalKind, type Scope } from '../src/domain/scopes.ts';
import { createIds } from '../src/ids.ts';
import { createServer, type Server, type ServerOptions } from '../src/server.ts';
import { insertAgent } from '../src/store/agents.ts';
import { type Database, openPglite, openPostgres, type QueryListener } from '../src/store/database.ts';
import { insertToken } from '../src/store/tokens.ts';
import { generateToken, hashToken, tokenPrefix } from '../src/tokens.ts';
import type { QueryTracer, Tracing } from '../src/tracing.ts';
import { databaseUrl } from './postgres-url.ts';

export type Engine = 'pglite' | 'postgres';
export const engine = (process.env.BATON_TEST_ENGINE ?? 'pglite') as Engine;
/**
 * Whether this project runs what gives the same answers on either engine (a start-up refusal before
 * any database is opened, a command run the same way on both): PostgreSQL's where it is configured,
 * else PGlite's, as for the suites vitest.config.ts runs once (ABOVE_THE_ENGINE).
 */
export const runsEngineFree = engine === (process.env.BATON_TEST_DATABASE_URL ? 'postgres' : 'pglite');

/** A fresh database for this test file: a copy of the migrated template, on this project's engine. */
export async function freshDatabase(onQuery?: QueryListener, trace?: QueryTracer): Promise<{ database: Database; url: string | undefined }> {
  if (engine === 'pglite') {
    const dump = await readFile(inject('pgliteDump'));
    return { database: await openPglite({ loadDataDir: new Blob([dump]), ...(onQuery ? { onQuery } : {}), trace }), url: undefined };
  }
  const serverUrl = process.env.BATON_TEST_DATABASE_URL ?? '';
  const name = `${inject('postgresRunId')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(serverUrl, name);
  return { database: openPostgres(url, 10, { ...(onQuery ? { onQuery } : {}), trace }), url };
}

/** The test configuration: a budget no suite reaches unless it sets `rateLimit` itself to test limiting; private webhook URLs allowed. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return loadConfig(
    {},
    {
      publicUrl: 'http://baton.test',
      rateLimit: { limit: 1_000_000, windowS: 3600 },
      // Webhook receivers in tests listen on 127.0.0.1.
      webhookAllowPrivate: true,
      secretKey: 'test-secret-key-0123456789abcdef0123456789abcdef',
      // Suites about leases expire the same task again and again: no back-off, no dead-letter,
      // unless a suite (test/collaboration/attempts.test.ts) sets them to test them.
      maxAttempts: 100,
      retryBackoffS: [0],
      ...overrides,
    },
  );
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: <T = Record<string, unknown>>() => T;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body text, sent as is (for malformed JSON). */
  payload?: string;
  headers?: Record<string, string>;
  /** Idempotency-Key; writes get a fresh one unless given or `null`. */
  key?: string | null;
  ifMatch?: string;
}

export interface TestServer {
  readonly app: FastifyInstance;
  readonly server: Server;
  readonly database: Database;
  /** The bootstrap human admin's token (every scope). */
  readonly adminToken: string;
  request(method: string, url: string, options?: RequestOptions): Promise<Response>;
  /** Adds a principal straight into the store (agent management is another issue) and returns its token. */
  addPrincipal(options?: { kind?: PrincipalKind; scopes?: readonly Scope[]; allowlist?: string[] | null; name?: string }): Promise<Principal>;
  close(): Promise<void>;
}

export interface Principal {
  id: string;
  token: string;
}

/** Starts the whole app (migrated, bootstrapped) on a fresh database, in process: requests go through `inject`. */
export async function startTestServer(overrides: Partial<Config> = {}, options: { onQuery?: QueryListener; database?: Database; clock?: Clock; logger?: ServerOptions['logger']; tracing?: Tracing } = {}): Promise<TestServer> {
  const database = options.database ?? (await freshDatabase(options.onQuery)).database;
  const server = await createServer(testConfig(overrides), {
    database,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
  });
  const adminToken = server.bootstrapToken;
  if (!adminToken) throw new Error('a fresh database should bootstrap an admin');
  const ids = createIds();
  const request = async (method: string, url: string, options: RequestOptions = {}): Promise<Response> => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? adminToken : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const write = method !== 'GET' && method !== 'HEAD';
    if (write && options.key !== null) headers['idempotency-key'] = options.key ?? randomUUID();
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
    let payload: string | undefined = options.payload;
    if (options.body !== undefined) payload = JSON.stringify(options.body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    const res = await server.app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) });
    return { status: res.statusCode, headers: res.headers, body: res.body, json: <T>() => JSON.parse(res.body) as T };
  };
  return {
    app: server.app,
    server,
    database,
    adminToken,
    request,
    async addPrincipal(options = {}) {
      const token = generateToken();
      const id = ids.make('agt');
      const scopes = [...(options.scopes ?? SCOPES)];
      const now = new Date();
      const by = { created_at: now, created_by_id: 'system', created_by_kind: 'system' };
      await database.db.transaction().execute(async (tx) => {
        await insertAgent(tx, { id, name: options.name ?? `test-${id.slice(-6)}`, kind: options.kind ?? 'agent', scopes, tool_allowlist: options.allowlist ?? null, ...by });
        await insertToken(tx, { id: ids.make('tok'), agent_id: id, machine: 'test-machine', token_hash: hashToken(token), token_prefix: tokenPrefix(token), scopes, expires_at: null, ...by });
      });
      return { id, token };
    },
    close: () => server.close(),
  };
}
