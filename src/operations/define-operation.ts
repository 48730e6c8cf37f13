import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { BatonError, ErrorCode } from '../errors.ts';
import type { EventType } from '../domain/event-types.ts';
import type { Principal } from '../domain/principal.ts';
import type { RateBudget } from '../domain/rate-budget.ts';
import type { Scope } from '../domain/scopes.ts';
import type { Ids } from '../ids.ts';
import type { EventRow } from '../store/events.ts';
import type { DB } from '../store/schema.ts';
import type { Tx } from '../store/connection.ts';
import type { Cursors } from './shared/cursors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** `destructive` and `outward` operations need a human's approval before they run (security issue). */
export type ApprovalClass = 'none' | 'destructive' | 'outward';

/**
 * The MCP tool sets (spec/mcp.md, "Tool sets and budgets"): `work` is an agent's loop, listed by
 * default to every caller; `tasks` the rest of working on tasks and reviewing them, listed by
 * default to humans; `admin` the rest (agents, tokens, webhooks, deletes), listed on request.
 */
export const TOOLSETS = ['work', 'tasks', 'admin'] as const;
export type Toolset = (typeof TOOLSETS)[number];

export interface HttpBinding {
  readonly method: HttpMethod;
  /** Under /api/v1, with `{name}` path parameters that are keys of the input. */
  readonly path: string;
  /** The status of a success; 200 unless given. */
  readonly successStatus?: 200 | 201 | 202;
  /** `artifact`: the body may be as large as a base64 artifact upload, not just BATON_BODY_LIMIT_BYTES. */
  readonly bodyLimit?: 'artifact';
  /** Input keys a write takes from the query string rather than the body (`?since=` on a replay). */
  readonly query?: readonly string[];
  /**
   * A paged read REST also serves whole: asked for `application/x-ndjson` or `text/csv` (Accept), the
   * route follows `next_cursor` through every page and streams the rows as it reads them (`data`, the
   * CSV header from `columns`), never holding more than a page (src/adapters/rest/download.ts).
   */
  readonly download?: true;
}

/** An event an operation asks to write; the executor adds id, actor, provenance and time. */
export interface EventDraft {
  readonly type: EventType;
  readonly subject: string;
  readonly data: Record<string, unknown>;
  /**
   * Who the event is by, when not the caller: `system` for what the server itself did during the
   * call (expiring a stale lease), or the original requester when an approval runs its request.
   */
  readonly by?: 'system' | Principal;
  /** The approval under which the operation ran. */
  readonly approvalId?: string;
}

/** The resource a gated operation acts on, and its version, so an approval can tell if it changed meanwhile. */
export interface ApprovalTarget {
  readonly id: string;
  readonly version: number;
}

/** Everything an operation may depend on besides the database. */
export interface OperationContext {
  readonly actor: Principal;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly config: Config;
  /**
   * The request's single timestamp: every row, lease time and event it writes carries this one. It
   * is read from `clock` the first time it is asked for, inside the transaction: so an operation
   * asks only once it holds its row locks, and a request that waited on a lock is timed from when
   * it got it (spec/api.md, "Time").
   */
  readonly now: Date;
  /** From If-Match (REST) or `expected_version` (MCP, GraphQL); undefined means "any version". */
  readonly expectedVersion: number | undefined;
  /** Queues an event; it is written in the same transaction, after the operation's own writes. */
  emit(event: EventDraft): void;
  /** The caller's rate budget after this request, when the interface counted one. */
  readonly rateBudget?: RateBudget | undefined;
  /** Every operation this service serves (whoami lists them, an approval runs one, an allowlist names them). */
  readonly operations: readonly Operation[];
  /** Signs the lists' `next_cursor` and checks the `cursor` a caller sends back, with the server's cursor key. */
  readonly cursors: Cursors;
  /** The instance's follower of the timeline, for a read that waits for something to happen (a bounded long-poll). */
  readonly tail?: EventTail | undefined;
  /**
   * Runs `work` in a short transaction of the caller's workspace (src/store/workspace-scope.ts): how
   * a read that `waits` reaches the database, one look at a time, holding no connection between.
   */
  inWorkspace<T>(work: (db: Kysely<DB>) => Promise<T>): Promise<T>;
}

interface OperationBase<I extends z.ZodObject, O extends z.ZodType, N extends string> {
  /**
   * `resource_verb` (a resource name has no `_`), or one word (`whoami`); also the MCP tool name and the
   * toolAllowlist entry. Matches ^[a-zA-Z0-9_-]{1,64}$, the tool-name pattern every MCP host accepts.
   */
  readonly name: N;
  /** One sentence, written once; feeds OpenAPI, the manifest, MCP and GraphQL. */
  readonly summary: string;
  readonly description?: string;
  /** The scope a token needs; null means any authenticated caller (whoami). */
  readonly scope: Scope | null;
  /**
   * Only a human may call it: an agent is refused `403 human_required` whatever its scopes, so no
   * agent is offered it (the manifest, tools/list and whoami leave it out of an agent's lists).
   */
  readonly humanOnly?: boolean;
  readonly approval: ApprovalClass;
  /**
   * Its MCP tool set, when declared; undeclared, a rule reads its scope and approval class (`tasks`
   * or `admin`, src/adapters/mcp/toolsets.ts). `work` is only ever declared: it is in every agent's
   * context, and test/agent/budgets.test.ts holds its members to a reviewed list.
   */
  readonly toolset?: Toolset;
  readonly http: HttpBinding;
  readonly input: I;
  readonly output: O;
  /** The resource version of a result, served as its ETag; only on operations about one versioned resource. */
  readonly version?: (output: z.output<O>) => number;
  /**
   * What the idempotency store keeps, when the response holds a secret shown once (a new token):
   * a replay then answers with this redacted copy. Without it the stored response is the response.
   */
  readonly redactForReplay?: (output: z.output<O>) => z.output<O>;
  /**
   * For gated operations: reads the target (throwing not_found) so the approval binds to its version.
   * Given the requesting `actor`, a target hidden from them is not_found too: nobody can ask for an
   * approval on what they may not see, nor learn from the answer that it exists.
   */
  approvalTarget?(db: Kysely<DB>, input: z.output<I>, actor?: Principal): Promise<ApprovalTarget>;
  /**
   * For gated operations on a resource that belongs to a principal: true when this caller may run it
   * without an approval (it owns the resource, or holds `agents:admin`). Without it, the gate always applies.
   */
  approvalWaived?(db: Kysely<DB>, actor: Principal, input: z.output<I>): Promise<boolean>;
  /**
   * For operations whose output holds a secret shown once (`redactForReplay`): the output the
   * requester of an approved call reads on that approval, the secret computed afresh, or the
   * redacted output when it no longer applies. Only the requester ever sees it.
   */
  revealToRequester?(db: Kysely<DB>, ctx: OperationContext, redacted: z.output<O>): Promise<z.output<O>>;
}

export interface ReadOperation<I extends z.ZodObject, O extends z.ZodType, N extends string = string> extends OperationBase<I, O, N> {
  readonly kind: 'read';
  /**
   * The read waits between its queries (a bounded long-poll). A read runs in one transaction of
   * the caller's workspace; this one would hold it, and a connection, while it waits. So it gets no
   * transaction: each look goes through `ctx.inWorkspace`, and `db` refuses every query.
   */
  readonly waits?: true;
  /**
   * How an MCP host follows this waiting read as a task instead of holding the request (spec/mcp.md,
   * "MCP Tasks"): the input member that holds its seconds; whether an answer ends the wait
   * (`settles`); and, if the next look must start where this one ended (a cursor), the input it
   * takes (`resume`). Each poll looks once, with no seconds, until an answer settles it or the
   * seconds are up.
   */
  readonly followable?: {
    readonly seconds: keyof z.output<I> & string;
    settles(output: z.output<O>): boolean;
    resume?(input: z.output<I>, output: z.output<O>): z.output<I>;
  };
  /**
   * The read may be answered a few seconds stale (a list, a search, figures, an export): with a
   * replica configured it runs there, within the configured lag, unless its caller wrote through
   * this instance within that lag (spec/api.md, "Reads from a replica"). Never on a read that `waits`.
   */
  readonly staleReads?: true;
  run(db: Kysely<DB>, ctx: OperationContext, input: z.output<I>): Promise<z.output<O>>;
  /**
   * The same read for many resources at once, in a fixed number of queries however many: `input`
   * with its one path parameter replaced by each of `ids` in turn (GraphQL nests such reads under
   * every object of a page). Answers in `ids` order, each the output or the error that id alone gets.
   */
  runBatch?(db: Kysely<DB>, ctx: OperationContext, input: z.output<I>, ids: readonly string[]): Promise<(z.output<O> | BatonError)[]>;
}

export interface WriteOperation<I extends z.ZodObject, O extends z.ZodType, N extends string = string> extends OperationBase<I, O, N> {
  readonly kind: 'write';
  /** Runs inside the request's one transaction; throwing rolls back every write and event. */
  run(tx: Tx, ctx: OperationContext, input: z.output<I>): Promise<z.output<O>>;
  /**
   * Whether its transaction's statements use their generic plans (src/store/workspace-scope.ts,
   * `Plans`): for a claim of one task, which PostgreSQL otherwise planned anew on every call, 0.4–0.5
   * ms of planning for 0.06–0.08 ms of running (bench/README.md, "Fleet"). Not for a claim of several:
   * its generic plan costs the limit, a parameter, as a tenth of the queue.
   */
  genericPlans?(input: z.output<I>): boolean;
  /**
   * Calls of this write that arrive together may share one transaction (src/service/write-groups.ts):
   * a hot write whose cost is mostly the transaction around it (a heartbeat: bench/README.md, "A
   * heartbeat's cost"). `runMany` does for each call what `run` would, in one pass over all of them,
   * and answers each call's output, or the refusal that call met before it wrote anything (that call
   * then runs again by itself once the group has committed, so its refusal is made and stored as
   * `run` makes it). Anything thrown rolls the whole group back, and each call then runs by itself.
   * Only for writes that ask no approval.
   */
  readonly group?: {
    /** Whether this call may join a group; one that may not runs by itself. */
    joins(input: z.output<I>): boolean;
    runMany(tx: Tx, calls: readonly GroupedCall<z.output<I>>[]): Promise<(z.output<O> | BatonError)[]>;
  };
  /**
   * A write that may wait out a refusal (a bounded long-poll, outside any transaction): refused with
   * `code`, it runs again after each batch of events the timeline appends (from any instance) and
   * at `retryAt` of the refusal (server clock), until it succeeds, fails otherwise, or `seconds` of
   * wall time (at most LONG_POLL_MAX_S) pass; then the last refusal stands.
   */
  readonly waitsOut?: {
    readonly code: ErrorCode;
    seconds(input: z.output<I>): number;
    retryAt(error: BatonError): Date | undefined;
  };
}

/** One call of a group (`WriteOperation.group`): its own context (caller, events, time) and input. */
export interface GroupedCall<I> {
  readonly ctx: OperationContext;
  readonly input: I;
}

/** Follows the timeline: each batch holds the next events strictly after the last one, in commit order. */
export interface EventTail {
  /**
   * Every event after `afterSeq`, forever, until `signal` aborts or the server closes (then it ends
   * quietly); with `interest`, only the events it admits, and the tail does not wake this follower
   * for an event that names none of its keys.
   */
  follow(afterSeq: string, signal: AbortSignal, interest?: EventInterest): AsyncIterable<readonly EventRow[]>;
  /**
   * What `make` answers for `row`, made once per `key` and shared by every stream that asks while
   * the row lives: the rows of a batch the tail read are the same objects for all its followers, so
   * an event is shaped (and serialised, by an adapter that caches on the answer) once per view, not
   * once per stream. The answer must not be changed by its readers.
   */
  shared<T extends object>(row: EventRow, key: string, make: () => T): T;
}

/**
 * What a filtered follower takes. The tail offers it only rows one of whose `eventKeys`
 * (src/domain/event-concerns.ts) is among `keys`, and calls `admit` on each of those exactly once,
 * in commit order (so `admit` may keep state, and change `keys`: the tail reads them again after each call).
 */
export interface EventInterest {
  readonly keys: ReadonlySet<string>;
  admit(row: EventRow): boolean;
}

/** What a stream depends on: the caller, the timeline's tail, and the signal that ends the subscription. */
export interface StreamContext {
  readonly actor: Principal;
  readonly config: Config;
  readonly tail: EventTail;
  readonly signal: AbortSignal;
}

/**
 * A live subscription (SSE on REST, a subscription on GraphQL). `output` is the schema of ONE item.
 * Not idempotent, not gated: streams only read.
 */
export interface StreamOperation<I extends z.ZodObject, O extends z.ZodType, N extends string = string> extends OperationBase<I, O, N> {
  readonly kind: 'stream';
  /**
   * Checks where the stream starts (throwing `BatonError` before any item is sent), then returns the
   * items in order, without gaps or repeats, until `ctx.signal` aborts.
   */
  open(db: Kysely<DB>, ctx: StreamContext, input: z.output<I>): Promise<AsyncIterable<z.output<O>>>;
  /** The item's resume position (SSE `id`) and its name (SSE `event`). */
  frameOf(item: z.output<O>): { readonly id: string; readonly event: string };
}

export type Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> =
  | ReadOperation<I, O>
  | WriteOperation<I, O>
  | StreamOperation<I, O>;

/** Operations answered with one response (everything but streams). */
export type CallableOperation = ReadOperation<z.ZodObject, z.ZodType> | WriteOperation<z.ZodObject, z.ZodType>;

/** The registry's bound: whoami's lists and an allowlist hold at most this many operations (test/openapi/manifest.test.ts holds the registry below it). */
export const OPERATIONS_MAX = 100;

/**
 * Declares one capability. Adapters derive routes, OpenAPI, MCP tools and GraphQL fields from it.
 * Keeps its kind and its name (as a literal type, so the registry's names form a union) in the type.
 */
export function defineOperation<I extends z.ZodObject, O extends z.ZodType, const N extends string>(operation: ReadOperation<I, O, N>): ReadOperation<I, O, N>;
export function defineOperation<I extends z.ZodObject, O extends z.ZodType, const N extends string>(operation: WriteOperation<I, O, N>): WriteOperation<I, O, N>;
export function defineOperation<I extends z.ZodObject, O extends z.ZodType, const N extends string>(operation: StreamOperation<I, O, N>): StreamOperation<I, O, N>;
export function defineOperation(operation: Operation): Operation {
  return operation;
}

/** True for operations answered with one response: every kind but streams (which MCP cannot serve as tools). */
export function isCallable(operation: Operation): operation is CallableOperation {
  return operation.kind !== 'stream';
}

/** How an MCP host may follow the operation as a task, if it is a read that waits and says so (`followable`). */
export function followableOf(operation: Operation): ReadOperation<z.ZodObject, z.ZodType>['followable'] {
  return operation.kind === 'read' ? operation.followable : undefined;
}

export type ParameterLocation = 'path' | 'query' | 'body';

/** Where each input key travels over HTTP: path parameters, then query (reads, deletes) or body (other writes). */
export function parameterLocation(operation: Operation, key: string): ParameterLocation {
  if (pathParameters(operation.http.path).includes(key)) return 'path';
  if (operation.http.query?.includes(key)) return 'query';
  return operation.http.method === 'GET' || operation.http.method === 'DELETE' ? 'query' : 'body';
}

/** Whether a write acts on one versioned resource, so it may carry If-Match (REST) or `expected_version` (MCP, GraphQL). */
export function takesExpectedVersion(operation: Operation): boolean {
  return operation.kind === 'write' && operation.version !== undefined && pathParameters(operation.http.path).length > 0;
}

export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
}

/**
 * An operation name's resource and verb: `tasks_claim_next` → [`tasks`, `claim_next`], `whoami` →
 * [`whoami`]. The first `_` (or `.`, the separator of the names before 0.2) ends the resource.
 */
export function operationParts(name: string): [resource: string, verb?: string] {
  const at = name.search(/[._]/);
  return at < 0 ? [name] : [name.slice(0, at), name.slice(at + 1)];
}
