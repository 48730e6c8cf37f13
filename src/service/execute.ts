import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { BatonError, type Dialect, isTransactionConflict, toBatonError, toProblem } from '../errors.ts';
import type { Ids } from '../ids.ts';
import type { CallableOperation, EventDraft, Operation, OperationContext } from '../operations/define-operation.ts';
import type { NewEventRow } from '../store/events.ts';
import { claimKey, storeResponse } from '../store/idempotency.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import { authorize, validate } from './admit.ts';
import { fingerprint } from './fingerprint.ts';
import { waitingOut } from './wait-out.ts';
import type { ReplicaReads } from './replica-reads.ts';
import type { InstanceTail } from './event-tail.ts';
import { requireKey } from './idempotency-key.ts';
import { decidesOwnApprovals, requestApproval } from './approval-gate.ts';
import { eventRow } from './event-rows.ts';
import type { RateBudget } from '../domain/rate-budget.ts';
import type { Principal } from '../domain/principal.ts';
import type { Cursors } from '../operations/shared/cursors.ts';
import { toV2Answer } from '../operations/tasks/v2-answer.ts';
import { joinsGroup, type WriteGroups } from './write-groups.ts';
import type { ApiVersion } from '../domain/api-version.ts';

export interface ExecuteDeps {
  readonly db: Kysely<DB>;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly config: Config;
  /** The operations the service serves, handed to each operation's context. */
  readonly operations: readonly Operation[];
  /** The lists' cursors, signed with the server's cursor key; handed to each operation's context. */
  readonly cursors: Cursors;
  /** Absolute base for problem `type` and `docs_url`. */
  readonly baseUrl: string;
  /** Where unexpected failures are reported before they become an `internal` problem, and writes run again. */
  readonly log: { error(details: object, message: string): void; warn(details: object, message: string): void };
  /** Told, once a write has committed on this instance, the events it appended. */
  readonly onCommit?: (events: readonly NewEventRow[]) => void;
  /** Writes this instance ran again after the database broke them off, by operation (read by /metrics). */
  readonly reruns?: Map<string, number>;
  /** The timeline's follower, handed to reads that long-poll (asks_get's `wait_s`, wait). */
  readonly tail?: InstanceTail;
  /** Where reads that may be stale run, when a replica is configured. */
  readonly replica?: ReplicaReads | undefined;
  /** Where writes that group (`WriteOperation.group`) wait for their group's transaction. */
  readonly groups?: WriteGroups;
}

/** How one interface presents a call: who, and the write-safety headers or arguments. */
export interface Call {
  readonly principal: Principal;
  readonly idempotencyKey: string | undefined;
  readonly expectedVersion: number | undefined;
  /** Ties a logged failure to the `request_id` its caller was shown. */
  readonly requestId?: string;
  /** The rate budget counted when the caller authenticated. */
  readonly budget?: RateBudget;
  /** How the caller's interface words hints, for the problem a failed write stores for its replays. */
  readonly dialect: Dialect;
  /** The API version the caller reads; absent: 1. */
  readonly apiVersion?: ApiVersion;
}

/** A finished call. `body` is the exact JSON text; a replay returns the stored text unchanged. */
export interface Outcome {
  readonly ok: boolean;
  readonly status: number;
  readonly body: string;
  readonly replayed: boolean;
  /** The resource version, served as the ETag. */
  readonly version: number | undefined;
  /** The answer's top-level `id` (the created member, or the pending approval), for a Location header. */
  readonly id: string | undefined;
}

/**
 * Runs one operation for one caller: authorize → validate → (writes) idempotency → one transaction
 * holding the operation's writes, its events and its stored response. Throws `BatonError` only.
 */
export async function execute(deps: ExecuteDeps, operation: CallableOperation, rawInput: unknown, call: Call): Promise<Outcome> {
  const outcome = await executeV1(deps, operation, rawInput, call);
  return call.apiVersion === 2 ? inV2(outcome, call, rawInput) : outcome;
}

/**
 * A v1 outcome as v2 answers it (operations/tasks/v2-answer.ts). A replay converts the stored text
 * the same way, so one key answers alike on either version; problems are the same on both.
 */
function inV2(outcome: Outcome, call: Call, rawInput: unknown): Outcome {
  if (!outcome.ok) return outcome;
  const input = (typeof rawInput === 'object' && rawInput !== null ? rawInput : {}) as { view?: unknown; fields?: unknown };
  const selected = input.view === 'full' || input.fields !== undefined;
  return { ...outcome, body: JSON.stringify(toV2Answer(JSON.parse(outcome.body), { principalId: call.principal.id, selected })) };
}

async function executeV1(deps: ExecuteDeps, operation: CallableOperation, rawInput: unknown, call: Call): Promise<Outcome> {
  authorize(operation, call.principal);
  const input = validate(operation, rawInput, deps.config);
  if (operation.kind === 'read') {
    const ctx = readContext(deps, operation, call);
    const read = operation.waits
      ? operation.run(refusingQueries(deps.db), ctx, input)
      : operation.staleReads && deps.replica
        ? staleRead(deps, deps.replica, operation, input, call)
        : ctx.inWorkspace((db) => operation.run(db, ctx, input));
    const output = await read.catch((error: unknown) => {
      throw reported(deps, operation, error, call.requestId);
    });
    return success(operation, output, false);
  }
  const key = requireKey(call.idempotencyKey);
  try {
    const alone = () => runWrite(deps, operation, input, call, key);
    const { groups } = deps;
    return await waitingOut(deps, operation, input, () => (groups && joinsGroup(operation, input) ? groups.submit(deps, operation, { input, call, key, alone }) : alone()));
  } finally {
    // Failed writes too: one the database stopped answering during may have committed.
    deps.replica?.wrote(call.principal.id);
  }
}

/**
 * A read that may be stale, on the replica when `replica` says so. A replica that fails it (down,
 * or the query cancelled by a conflict with recovery) is set aside and the read runs again on the
 * primary: reads change nothing, so running one twice is safe. What the operation itself refuses
 * (a `BatonError`) is its answer, wherever it ran.
 */
async function staleRead(deps: ExecuteDeps, replica: ReplicaReads, operation: Operation & { kind: 'read' }, input: z.output<z.ZodObject>, call: Call): Promise<unknown> {
  const { db, on } = await replica.pick(call.principal.id);
  const onPrimary = () => {
    const ctx = readContext(deps, operation, call);
    return ctx.inWorkspace((tx) => operation.run(tx, ctx, input));
  };
  if (on === 'primary') return onPrimary();
  const ctx = readContext({ ...deps, db }, operation, call);
  try {
    return await ctx.inWorkspace((tx) => operation.run(tx, ctx, input));
  } catch (error) {
    if (error instanceof BatonError) throw error;
    replica.failed();
    deps.log.warn({ err: error, operation: operation.name, request_id: call.requestId }, 'a read on the replica failed; the primary answers it, and the next reads until the replica checks well again');
    return onPrimary();
  }
}

/** One write, run again when the database broke it off (deadlock) or a duplicate raced its key. */
async function runWrite(deps: ExecuteDeps, operation: Operation & { kind: 'write' }, input: z.output<z.ZodObject>, call: Call, key: string): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await executeWrite(deps, operation, input, call, key);
    } catch (error) {
      // One more run covers the rare race where a duplicate commits between our key check and our insert.
      if (error instanceof LostKeyRace && attempt < 2) continue;
      // The database rolled the transaction back whole to end a deadlock: running it again is safe.
      if (isTransactionConflict(error) && attempt < CONFLICT_RUNS) {
        const sqlstate = (error as { code?: unknown }).code;
        deps.log.warn({ operation: operation.name, request_id: call.requestId, sqlstate, attempt }, 'write broken off by the database (deadlock or serialization failure); running it again');
        deps.reruns?.set(operation.name, (deps.reruns.get(operation.name) ?? 0) + 1);
        continue;
      }
      throw reported(deps, operation, error, call.requestId);
    }
  }
}

/** How many times a write runs before a deadlock or serialization failure becomes `write_contention`. */
const CONFLICT_RUNS = 3;

class LostKeyRace extends Error {}

async function executeWrite(
  deps: ExecuteDeps,
  operation: Operation & { kind: 'write' },
  input: z.output<z.ZodObject>,
  call: Call,
  key: string,
): Promise<Outcome> {
  const now = deps.clock.now();
  const print = fingerprint(operation.name, input);
  const expiresAt = new Date(now.getTime() + deps.config.idempotencyTtlS * 1000);
  const keyRow = { principal_id: call.principal.id, key, fingerprint: print, operation: operation.name, created_at: now, expires_at: expiresAt };
  let started = false;
  let appended: NewEventRow[] = [];
  try {
    const outcome = await inWorkspace(deps.db, call.principal.workspaceId, async (tx) => {
      const claim = await claimKey(tx, call.principal.id, key, now);
      if (claim.state === 'in_flight') {
        throw new BatonError('idempotency_in_progress', `A request with Idempotency-Key "${key}" is still running.`, {
          headers: { 'retry-after': '1' },
        });
      }
      if (claim.state === 'stored') {
        const { response } = claim;
        if (response.operation !== operation.name || !sameBytes(response.fingerprint, print)) {
          throw new BatonError(
            'idempotency_key_reused',
            `Idempotency-Key "${key}" was first used for a different ${response.operation} request; this one differs.`,
          );
        }
        return replay(operation, response.status_code, response.response_body);
      }
      started = true;
      if (operation.approval !== 'none' && !decidesOwnApprovals(call.principal) && !(await operation.approvalWaived?.(tx, call.principal, input))) {
        const requested = await requestApproval(deps.ids, tx, { operation, input, principal: call.principal, expectedVersion: call.expectedVersion, key, print, now, keyRow });
        if (!requested) throw new LostKeyRace();
        appended = requested.events;
        return { ok: true, status: 202, body: requested.body, replayed: false, version: undefined, id: requested.id };
      }
      const events: EventDraft[] = [];
      const ctx = context(deps, call, (event) => events.push(event));
      const output = await operation.run(tx, ctx, input);
      const result = success(operation, output, false);
      const stored = operation.redactForReplay ? JSON.stringify(operation.redactForReplay(output)) : result.body;
      const rows = events.map((e) => eventRow(deps.ids, e, call.principal, key, ctx.now));
      if (!(await storeResponse(tx, { ...keyRow, status_code: result.status, response_body: stored }, rows))) throw new LostKeyRace();
      appended = rows;
      return result;
    }, '', operation.genericPlans?.(input) ? 'generic' : 'auto');
    if (appended.length > 0) deps.onCommit?.(appended);
    return outcome;
  } catch (error) {
    if (error instanceof LostKeyRace || isTransactionConflict(error)) throw error;
    const failure = uncertainIfUnavailable(reported(deps, operation, error, call.requestId), key);
    // Once the handler started, its outcome is what a replay returns (Stripe's rule); a retryable
    // failure is not remembered, so retrying with the same key can still succeed.
    if (started && !failure.retryable) {
      const body = JSON.stringify(toProblem(failure, deps.baseUrl, call.dialect));
      await inWorkspace(deps.db, call.principal.workspaceId, (tx) => storeResponse(tx, { ...keyRow, status_code: failure.status, response_body: body }))
        .catch(() => undefined);
    }
    throw failure;
  }
}

/**
 * A write the database stopped answering during may have committed (the commit's answer is what
 * got lost) or not; the problem says so, and how to find out safely.
 */
function uncertainIfUnavailable(failure: BatonError, key: string): BatonError {
  if (failure.code !== 'unavailable') return failure;
  return new BatonError(
    'unavailable',
    `${failure.detail} This write may or may not have been applied.`,
    {
      hint: `Retry with the same [[Idempotency-Key]] ("${key}"): if the write was applied, the retry answers with its stored outcome; if not, it is applied once.`,
      headers: failure.headers,
    },
  );
}

/** The context of a read: no events may be emitted. */
export function readContext(deps: ExecuteDeps, operation: Operation, call: Call): OperationContext {
  return context(deps, call, () => {
    throw new Error(`read operation ${operation.name} tried to emit an event`);
  });
}

/** An operation's context; `now` is read from the clock when first asked for (after the operation's locks), then fixed. */
export function context(deps: ExecuteDeps, call: Call, emit: (event: EventDraft) => void): OperationContext {
  let now: Date | undefined;
  return {
    actor: call.principal,
    clock: deps.clock,
    ids: deps.ids,
    config: deps.config,
    get now() {
      return (now ??= deps.clock.now());
    },
    expectedVersion: call.expectedVersion,
    emit,
    rateBudget: call.budget,
    operations: deps.operations,
    cursors: deps.cursors,
    tail: deps.tail?.inWorkspace(call.principal.workspaceId),
    inWorkspace: (work) => inWorkspace(deps.db, call.principal.workspaceId, work, call.principal.id),
  };
}

/** The handle a read that `waits` is given: it reaches the database through `ctx.inWorkspace` only. */
function refusingQueries(db: Kysely<DB>): Kysely<DB> {
  return db.withPlugin({
    transformQuery() {
      throw new Error('a read that waits queries through ctx.inWorkspace, not its db handle');
    },
    transformResult: async ({ result }) => result,
  });
}

/** The outcome of a run that returned `output`. */
export function success(operation: Operation, output: unknown, replayed: boolean): Outcome {
  return {
    ok: true,
    status: operation.http.successStatus ?? 200,
    body: JSON.stringify(output),
    replayed,
    version: operation.version?.(output),
    id: idOf(output),
  };
}

function replay(operation: Operation, status: number, body: string): Outcome {
  if (status >= 400) return { ok: false, status, body, replayed: true, version: undefined, id: undefined };
  const output = JSON.parse(body) as unknown;
  return { ok: true, status, body, replayed: true, version: operation.version?.(output), id: idOf(output) };
}

function idOf(output: unknown): string | undefined {
  const id = typeof output === 'object' && output !== null ? (output as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** Logs what is not a `BatonError` (a bug or an outage) once, then returns the error to throw. */
export function reported(deps: ExecuteDeps, operation: Operation, error: unknown, requestId: string | undefined): BatonError {
  if (!(error instanceof BatonError)) deps.log.error({ err: error, operation: operation.name, request_id: requestId }, 'operation failed unexpectedly');
  return toBatonError(error);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
