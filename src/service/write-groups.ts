/**
 * Group commit for hot writes (`WriteOperation.group`): calls of one such operation in one
 * workspace that arrive while its last group is still in its transaction wait, and then run
 * together in the next: one transaction, one key claim, one pass of the operation and one store of
 * every answer and event, instead of one of each per call. A call arriving when no group is running
 * starts one at once, so a quiet server answers as fast as before and a busy one groups more; while
 * a full group's worth waits, more groups run at once (see `WriteGroups.submit`).
 *
 * Each call keeps what it had alone: its idempotency key and stored answer, its own events under
 * its own key and caller, its own time. What a call cannot do inside the group (a replayed or
 * in-flight key, a refusal, a repeated key) runs again by itself once the group has committed,
 * through `alone`, so its answer is made exactly as a lone call's is. If the group's transaction
 * fails in any way, nothing of it was written, and every call runs by itself.
 */
import type { Span } from '@opentelemetry/api';
import type { z } from 'zod';
import type { Tracing } from '../tracing.ts';
import { BatonError } from '../errors.ts';
import type { EventDraft, GroupedCall, WriteOperation } from '../operations/define-operation.ts';
import type { NewEventRow } from '../store/events.ts';
import { claimKeys, type NewStoredResponse, storeResponses } from '../store/idempotency.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import { eventRow } from './event-rows.ts';
import { type Call, context, type ExecuteDeps, type Outcome, success } from './execute.ts';
import { fingerprint } from './fingerprint.ts';

/** The most calls one group's transaction carries; more wait for the next. */
const GROUP_MAX = 64;
/** The most groups of one queue in their transactions at once (see `submit`). */
const GROUPS_IN_FLIGHT = 4;

type GroupedWrite = WriteOperation<z.ZodObject, z.ZodType> & { group: NonNullable<WriteOperation<z.ZodObject, z.ZodType>['group']> };

/** Whether this call of `operation` may run in a group: the operation groups, asks no approval, and takes this input in one. */
export function joinsGroup(operation: WriteOperation<z.ZodObject, z.ZodType>, input: z.output<z.ZodObject>): operation is GroupedWrite {
  return operation.group !== undefined && operation.approval === 'none' && operation.group.joins(input);
}

interface Waiting {
  readonly input: z.output<z.ZodObject>;
  readonly call: Call;
  readonly key: string;
  /** Runs the call by itself, as `execute` runs any write. */
  readonly alone: () => Promise<Outcome>;
  /** The request's span, which the group's span links to. */
  readonly span: Span | undefined;
  readonly settle: { readonly resolve: (outcome: Outcome) => void; readonly reject: (error: unknown) => void };
}

/** How many groups ran and how many calls they carried, by operation (read by /metrics). */
export interface GroupCounts {
  groups: number;
  calls: number;
}

/** The calls of one operation and workspace waiting for a group, and how many of its groups are running. */
interface Queue {
  readonly waiting: Waiting[];
  running: number;
}

/** The groups of one service instance: a queue per operation and workspace, and its groups in their transactions. */
export class WriteGroups {
  readonly #queues = new Map<string, Queue>();
  readonly #tracing: Tracing;
  readonly counts = new Map<string, GroupCounts>();

  constructor(tracing: Tracing) {
    this.#tracing = tracing;
  }

  /**
   * Runs the call in a group, or by itself (`alone`) when it cannot join one. A call that finds
   * none of its queue's groups running starts one at once; otherwise it waits for the next, which
   * is what makes groups. Only while a full group's worth waits does another group start beside the
   * running ones (up to GROUPS_IN_FLIGHT): one group at a time would cap the calls at GROUP_MAX per
   * transaction's latency, so a slow database, or one call waiting on a lock, would hold back every
   * heartbeat of the workspace.
   */
  submit(deps: ExecuteDeps, operation: GroupedWrite, waiting: Omit<Waiting, 'settle' | 'span'>): Promise<Outcome> {
    const name = `${operation.name} ${waiting.call.principal.workspaceId}`;
    return new Promise<Outcome>((resolve, reject) => {
      let queue = this.#queues.get(name);
      if (!queue) this.#queues.set(name, (queue = { waiting: [], running: 0 }));
      queue.waiting.push({ ...waiting, span: this.#tracing.activeSpan(), settle: { resolve, reject } });
      if (queue.running > 0 && (queue.waiting.length < GROUP_MAX || queue.running >= GROUPS_IN_FLIGHT)) return;
      queue.running++;
      void this.#drain(deps, operation, name, queue);
    });
  }

  /** Runs groups from the queue until it is empty; the last of its groups to end forgets it. */
  async #drain(deps: ExecuteDeps, operation: GroupedWrite, name: string, queue: Queue): Promise<void> {
    while (queue.waiting.length > 0) {
      const members = queue.waiting.splice(0, GROUP_MAX);
      const counts = this.counts.get(operation.name) ?? { groups: 0, calls: 0 };
      counts.groups += 1;
      counts.calls += members.length;
      this.counts.set(operation.name, counts);
      const group = () => runGroup(deps, operation, members);
      await this.#tracing.inSharedSpan(`${operation.name} group`, { 'baton.operation': operation.name, 'baton.group.calls': members.length }, members.map((m) => m.span), group).catch((error: unknown) => {
        for (const member of members) member.settle.reject(error);
      });
    }
    if (--queue.running === 0) this.#queues.delete(name);
  }
}

/** One group's transaction; settles every member, never throws. */
async function runGroup(deps: ExecuteDeps, operation: GroupedWrite, members: readonly Waiting[]): Promise<void> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + deps.config.idempotencyTtlS * 1000);
  // A key sent twice in one group is claimed once; the repeat runs by itself and finds the first's answer.
  const claimed = new Set<string>();
  const unique = members.filter((m) => {
    const id = `${m.call.principal.id} ${m.key}`;
    if (claimed.has(id)) return false;
    claimed.add(id);
    return true;
  });
  const workspaceId = members[0]?.call.principal.workspaceId ?? '';
  let done: { member: Waiting; outcome: Outcome }[] = [];
  let appended: NewEventRow[] = [];
  try {
    ({ done, appended } = await inWorkspace(deps.db, workspaceId, async (tx) => {
      const claims = await claimKeys(tx, unique.map((m) => ({ principalId: m.call.principal.id, key: m.key })), now);
      const fresh = unique.filter((_, i) => claims[i]?.state === 'fresh');
      if (fresh.length === 0) return { done: [], appended: [] };
      const runs = fresh.map((member) => {
        const events: EventDraft[] = [];
        const ctx = context(deps, member.call, (event) => events.push(event));
        return { member, events, ctx, call: { ctx, input: member.input } satisfies GroupedCall<z.output<z.ZodObject>> };
      });
      const outputs = await operation.group.runMany(tx, runs.map((r) => r.call));
      const finished = runs.flatMap((run, i) => {
        const output = outputs[i];
        if (output === undefined || output instanceof BatonError) return [];
        const { member, events, ctx } = run;
        const outcome = success(operation, output, false);
        const stored = operation.redactForReplay ? JSON.stringify(operation.redactForReplay(output)) : outcome.body;
        const keyRow: NewStoredResponse = {
          principal_id: member.call.principal.id, key: member.key, fingerprint: fingerprint(operation.name, member.input), operation: operation.name,
          created_at: now, expires_at: expiresAt, status_code: outcome.status, response_body: stored,
        };
        return [{ member, outcome, keyRow, rows: events.map((e) => eventRow(deps.ids, e, member.call.principal, member.key, ctx.now)) }];
      });
      const rows = finished.flatMap((f) => f.rows);
      // A live key another request stored since the claim: roll the group back; each call then finds its own answer alone.
      if (!(await storeResponses(tx, finished.map((f) => f.keyRow), rows))) throw new Error('a key of the group was stored meanwhile');
      return { done: finished.map(({ member, outcome }) => ({ member, outcome })), appended: rows };
    }));
  } catch (error) {
    if (!(error instanceof BatonError)) deps.log.warn({ err: error, operation: operation.name, calls: members.length }, 'a group of writes failed as a whole; each runs again by itself');
    done = [];
    appended = [];
  }
  if (appended.length > 0) deps.onCommit?.(appended);
  const answered = new Set(done.map((d) => d.member));
  for (const { member, outcome } of done) member.settle.resolve(outcome);
  for (const member of members) {
    if (!answered.has(member)) member.alone().then(member.settle.resolve, member.settle.reject);
  }
}
