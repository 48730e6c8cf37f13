import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import { type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';
import type { Problem } from '../../errors.ts';
import type { CallableOperation, Operation } from '../../operations/define-operation.ts';
import type { Call, Outcome } from '../../service/execute.ts';
import type { Service } from '../../service/service.ts';
import { problemError } from './errors.ts';

/** What one GraphQL request carries: its caller, its batch loaders, and the keys its writes used. */
export interface GraphqlContext {
  readonly service: Service;
  /** The authenticated caller, without the per-write key and version. */
  readonly call: Omit<Call, 'idempotencyKey' | 'expectedVersion'>;
  readonly loaders: Map<string, DataLoader<string, unknown>>;
  /** Per mutation response key: the Idempotency-Key used (sent or generated) and whether it was a replay. */
  readonly idempotency: Record<string, { key: string; replayed: boolean }>;
  /** Objects a gated write returned instead of running: a pending approval (REST's 202). */
  readonly pendingApprovals: WeakSet<object>;
}

/** How a field's GraphQL selection becomes the operation's `fields` input (operations that take one). */
export interface Projection {
  /** The member holding the selected objects: `data` on a page, none on a single object. */
  readonly under: string | undefined;
  /** The object's own field names (relations are not fields of the REST object). */
  readonly names: ReadonlySet<string>;
}

function outputOf(ctx: GraphqlContext, outcome: Outcome): unknown {
  const body: unknown = JSON.parse(outcome.body);
  // A replayed failure is stored as its problem document.
  if (!outcome.ok) throw problemError(body as Problem);
  if (outcome.status === 202 && body && typeof body === 'object') ctx.pendingApprovals.add(body);
  return body;
}

/** GraphQL passes `null` for an optional argument left out; the operation's schema means "absent" by omission. */
export function operationInput(args: Record<string, unknown>, nullable: ReadonlySet<string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([name, value]) => value !== null || nullable.has(name)));
}

/** The selected field names under this field (through fragments), as the operation's comma-separated `fields`. */
export function selectedFields(info: GraphQLResolveInfo, projection: Projection): string {
  const names = new Set<string>();
  const walk = (set: SelectionSetNode | undefined, depth: number): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        if (projection.under !== undefined && depth === 0) {
          if (selection.name.value === projection.under) walk(selection.selectionSet, 1);
        } else if (projection.names.has(selection.name.value)) {
          names.add(selection.name.value);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, depth);
      } else {
        walk(info.fragments[selection.name.value]?.selectionSet, depth);
      }
    }
  };
  for (const node of info.fieldNodes) walk(node.selectionSet, 0);
  // Relations (a task's comments, say) are resolved from the object's id, and an empty `fields` is refused.
  if (projection.names.has('id')) names.add('id');
  return [...names].join(',');
}

export async function runRead(ctx: GraphqlContext, operation: CallableOperation, input: Record<string, unknown>): Promise<unknown> {
  return outputOf(ctx, await ctx.service.execute(operation, input, { ...ctx.call, idempotencyKey: undefined, expectedVersion: undefined }));
}

/** Runs a write under the caller's Idempotency-Key, or a fresh one it gets back in the response's `extensions`. */
export async function runWrite(
  ctx: GraphqlContext,
  operation: CallableOperation,
  args: { idempotencyKey: string | undefined; expectedVersion: number | undefined; input: Record<string, unknown> },
  responseKey: string,
): Promise<unknown> {
  const key = args.idempotencyKey ?? randomUUID();
  ctx.idempotency[responseKey] = { key, replayed: false };
  const outcome = await ctx.service.execute(operation, args.input, { ...ctx.call, idempotencyKey: key, expectedVersion: args.expectedVersion });
  ctx.idempotency[responseKey] = { key, replayed: outcome.replayed };
  return outputOf(ctx, outcome);
}

/**
 * The read nested under a parent object, batched: every parent in this request asking the same
 * field with the same arguments joins one `executeBatch` call.
 */
export function runNested(ctx: GraphqlContext, operation: Operation, input: Record<string, unknown>, parentId: string): Promise<unknown> {
  const key = `${operation.name} ${JSON.stringify(input)}`;
  let loader = ctx.loaders.get(key);
  if (!loader) {
    loader = new DataLoader<string, unknown>(async (ids) => {
      const outcomes = await ctx.service.executeBatch(operation, input, ids, { ...ctx.call, idempotencyKey: undefined, expectedVersion: undefined });
      return outcomes.map((o) => {
        if (o instanceof Error) return o;
        try {
          return outputOf(ctx, o);
        } catch (error) {
          return error;
        }
      });
    });
    ctx.loaders.set(key, loader);
  }
  return loader.load(parentId);
}

/**
 * Opens a stream operation as a subscription. Refusals (scope, allowlist, a bad `since`) throw here,
 * before any item, so they come back as problem-shaped errors. The subscription ends, and its
 * database follow with it, when the client goes away (GraphQL calls `return`) or the server closes.
 */
export async function openStream(ctx: GraphqlContext, operation: Operation, input: Record<string, unknown>): Promise<AsyncIterableIterator<unknown>> {
  const controller = new AbortController();
  const items = (await ctx.service.subscribe(operation, input, { principal: ctx.call.principal, stop: controller }))[Symbol.asyncIterator]();
  const subscription: AsyncIterableIterator<unknown> = {
    next: () => items.next(),
    async return(value?: unknown) {
      controller.abort();
      await items.return?.(value);
      return { done: true, value };
    },
    [Symbol.asyncIterator]: () => subscription,
  };
  return subscription;
}
