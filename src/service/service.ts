import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { BatonError } from '../errors.ts';
import type { Ids } from '../ids.ts';
import type { CallableOperation, Operation } from '../operations/define-operation.ts';
import type { InstanceTail } from './event-tail.ts';
import { operations } from '../operations/index.ts';
import { cursorCodec } from '../operations/shared/cursors.ts';
import type { Database } from '../store/database.ts';
import type { NewEventRow } from '../store/events.ts';
import { readStats, type StoreStats } from '../store/stats.ts';
import { DEFAULT_WORKSPACE_ID } from '../store/workspace-scope.ts';
import type { Principal } from '../domain/principal.ts';
import { shedding } from './admission.ts';
import { type Authenticated, authenticate, counted, rateCharge } from './authenticate.ts';
import { authenticateSession, type ProviderLogout, type SignedIn, signIn, signOut, signOutAtProvider, switchWorkspace, type VerifiedIdentity } from './sessions.ts';
import { type Call, execute, type Outcome } from './execute.ts';
import { type InboundEvent, type InboundReceipt, receiveInbound } from './inbound/receive.ts';
import { type StreamCall, subscribe } from './subscribe.ts';
import { streamGrants } from './stream-grants.ts';
import { executeBatch } from './execute-batch.ts';
import { type ReplicaReads, replicaReads } from './replica-reads.ts';
import type { Tracing } from '../tracing.ts';
import { type McpTasks, mcpTasks } from './mcp-tasks.ts';
import { type GroupCounts, WriteGroups } from './write-groups.ts';

export interface Logger {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** The one service layer every interface calls. It owns the database; adapters never see it. */
export interface Service {
  readonly operations: readonly Operation[];
  readonly config: Config;
  /** Absolute base URL for links in problems and docs. */
  readonly baseUrl: string;
  /** The server's clock, for the time checks an adapter makes (the age of a signed inbound webhook). */
  readonly clock: Clock;
  /** The instance's tracing (a no-op when off), for the spans adapters start at their seams. */
  readonly tracing: Tracing;
  /**
   * Resolves the bearer token, or without one the session cookie's secret, and counts the request
   * against its rate budget (spec/identity.md, "Sessions"): `operations` of it (default 1), all or
   * none, for a GraphQL document of several mutations or an MCP batch of tool calls (spec/api.md, Rate limits).
   */
  authenticate(authorization: string | undefined, sessionSecret?: string, operations?: number): Promise<Authenticated>;
  /**
   * Throws 503 `unavailable` at once when the database's pool is too busy to take `operationName`
   * (the operation, or the interface's name for a call of several), before it is authenticated
   * (src/service/admission.ts).
   */
  admit(operationName: string): void;
  /** Opens a cookie session for a person whose ID token the caller verified (creating them on first sign-in). */
  signIn(identity: VerifiedIdentity, userAgent: string): Promise<SignedIn>;
  /** Ends the session of a cookie secret on the server; an unknown or ended one is left alone. */
  signOut(sessionSecret: string): Promise<void>;
  /** Ends the sessions a provider's back-channel logout token (verified by the caller) names; answers how many. */
  signOutAtProvider(logout: ProviderLogout): Promise<number>;
  /** Moves a signed-in person to another of their workspaces: a new session there, this one ended. */
  switchWorkspace(sessionSecret: string, workspaceId: string, userAgent: string): Promise<SignedIn>;
  /** The key this server signs its own cookies with (the sign-in state, the CSRF secret), the same on every instance. */
  readonly cookieKey: Buffer;
  execute(operation: CallableOperation, input: unknown, call: Call): Promise<Outcome>;
  /**
   * Opens a stream operation (`kind: 'stream'`, e.g. events_stream) for one caller. Authorization and
   * input errors throw `BatonError` here, before any item; the items (each valid against the
   * operation's `output`) then arrive in order, with no gap and no repeat, until `call.stop`
   * aborts or the server closes. REST serves it as SSE; GraphQL can serve it as a subscription.
   */
  subscribe(operation: Operation, input: unknown, call: StreamCall): Promise<AsyncIterable<unknown>>;
  /** One read for many ids of its single path parameter (GraphQL's nested fields); see `executeBatch`. */
  executeBatch(operation: Operation, input: Record<string, unknown>, ids: readonly string[], call: Call): Promise<(Outcome | BatonError)[]>;
  /** Throws `unavailable` when the database does not answer. */
  checkReady(): Promise<void>;
  /**
   * Aggregate counts for /metrics: the whole server's, every workspace's. `reader` (on the API's
   * address) must hold `metrics:read` or `agents:admin` and be a principal of the server's first
   * workspace, the operator's: to any other workspace the server's figures would count what it must
   * not see (throws `forbidden_scope`). Without a reader: the scraper at BATON_METRICS_ADDRESS.
   */
  stats(reader?: Principal): Promise<StoreStats>;
  /** Writes this instance ran again since it started because the database broke them off (deadlock, serialization failure), by operation. */
  writeReruns(): ReadonlyMap<string, number>;
  /** The groups that writes which share transactions ran in since start, and the calls they carried, by operation (src/service/write-groups.ts). */
  writeGroups(): ReadonlyMap<string, Readonly<GroupCounts>>;
  /** Calls this instance refused at the door since it started because the database's pool was too busy, by operation. */
  shedCalls(): ReadonlyMap<string, number>;
  /** The database pool's connections and the calls waiting for one now (`Database.poolLoad`). */
  poolLoad(): { readonly size: number; readonly waiting: number };
  /** Reads that may be stale served by the replica and by the primary since start, and the replica's lag; undefined without a replica. */
  replicaReads(): ReturnType<ReplicaReads['figures']> | undefined;
  /** Applies a provider event whose signature the caller verified, once per provider event id. */
  receiveInbound(event: InboundEvent): Promise<InboundReceipt>;
  /** The handles of MCP tool calls that would wait (spec/mcp.md, "MCP Tasks"), for the MCP adapter. */
  readonly mcpTasks: McpTasks;
}

/** How long `/readyz` waits for the database. */
const READY_TIMEOUT_MS = 1_500;
/** How often an open stream's token is re-checked: a revoked token, disabled agent or lost scope ends it. */
const STREAM_RECHECK_MS = 5000;

export interface ServiceDeps {
  readonly database: Database;
  readonly config: Config;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly log: Logger;
  /** The instance's one follower of the timeline, shared by every stream. */
  readonly tail: InstanceTail;
  /** Told, once a write through this instance's operations has committed, the events it appended. */
  readonly onCommit?: (events: readonly NewEventRow[]) => void;
  /** The key every instance on this database signs list cursors with (store/server-keys.ts). */
  readonly cursorKey: Uint8Array;
  readonly tracing: Tracing;
}

export function createService(deps: ServiceDeps): Service {
  const { database, config, clock } = deps;
  const baseUrl = config.publicUrl;
  const authenticateDeps = { db: database.counters, rate: config.rateLimit, humansUseSso: config.oidc?.required ?? false };
  const sessionDeps = { db: database.db, clock, ids: deps.ids, config };
  const reruns = new Map<string, number>();
  const shed = new Map<string, number>();
  const replica =
    database.replica && config.readReplica ? replicaReads({ primary: database.db, replica: database.replica, clock, maxLagS: config.readReplica.maxLagS }) : undefined;
  const subscribeDeps = { db: database.db, config, tail: deps.tail, grants: streamGrants({ db: database.db, clock }, STREAM_RECHECK_MS) };
  const groups = new WriteGroups(deps.tracing);
  const executeDeps = { replica, groups, db: database.db, clock, ids: deps.ids, config, operations, cursors: cursorCodec(deps.cursorKey), baseUrl, log: deps.log, reruns, tail: deps.tail, ...(deps.onCommit ? { onCommit: deps.onCommit } : {}) };
  return {
    operations,
    config,
    baseUrl,
    clock,
    tracing: deps.tracing,
    async authenticate(authorization, sessionSecret, operations = 1) {
      const now = clock.now();
      if (authorization !== undefined || sessionSecret === undefined) return authenticate(authenticateDeps, authorization, { now, operations });
      const { principal, count } = await authenticateSession(sessionDeps, sessionSecret, rateCharge(authenticateDeps, now, operations));
      return counted(authenticateDeps, principal, count, now);
    },
    admit(operationName) {
      const refusal = shedding(operationName, database.poolLoad());
      if (!refusal) return;
      shed.set(operationName, (shed.get(operationName) ?? 0) + 1);
      throw refusal;
    },
    signIn: (identity, userAgent) => signIn(sessionDeps, identity, userAgent),
    signOut: (secret) => signOut(sessionDeps, secret),
    signOutAtProvider: (logout) => signOutAtProvider(sessionDeps, logout),
    switchWorkspace: (secret, workspaceId, userAgent) => switchWorkspace(sessionDeps, secret, workspaceId, userAgent),
    cookieKey: createHmac('sha256', deps.cursorKey).update('baton cookies').digest(),
    execute: (operation, input, call) => execute(executeDeps, operation, input, call),
    receiveInbound: (event) => receiveInbound(executeDeps, event),
    subscribe: (operation, input, call) => subscribe(subscribeDeps, operation, { ...call, input }),
    executeBatch: (operation, input, ids, call) => executeBatch(executeDeps, operation, input, ids, call),
    async checkReady() {
      // A load balancer asks often and must hear "no" quickly: a database that does not answer within
      // READY_TIMEOUT_MS counts as down, whatever the statement timeout is.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS)));
      const answered = sql`SELECT 1`.execute(database.db).then(() => true, () => false);
      const ready = await Promise.race([answered, late]).finally(() => clearTimeout(timer));
      if (!ready) throw new BatonError('unavailable', `The ${database.engine} database did not answer within ${READY_TIMEOUT_MS / 1000} s.`, { headers: { 'retry-after': '5' } });
    },
    stats: (reader) => {
      if (reader) mayReadMetrics(reader);
      return readStats(database.db, clock.now());
    },
    writeReruns: () => reruns,
    writeGroups: () => groups.counts,
    shedCalls: () => shed,
    poolLoad: () => database.poolLoad(),
    replicaReads: () => replica?.figures(),
    mcpTasks: mcpTasks({ db: database.db, clock, ids: deps.ids }),
  };
}

/** Throws unless `reader` may read the server's figures (see `Service.stats`). */
function mayReadMetrics(reader: Principal): void {
  if (!reader.scopes.has('metrics:read') && !reader.scopes.has('agents:admin')) {
    throw new BatonError('forbidden_scope', `/metrics needs scope metrics:read; this token has ${[...reader.scopes].join(', ') || 'none'}.`, {
      extra: { required_scope: 'metrics:read' },
    });
  }
  if (reader.workspaceId !== DEFAULT_WORKSPACE_ID) {
    throw new BatonError('forbidden_scope', "/metrics counts every workspace's tasks and requests on this server, so only the operator's workspace (the server's first) reads it.", {
      extra: { required_scope: 'metrics:read' },
      hint: "Ask the server's operator for these figures; your workspace's own are in [[insight_get]].",
    });
  }
}
