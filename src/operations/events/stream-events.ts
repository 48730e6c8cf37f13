import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../../store/schema.ts';
import { type Concerned, concerns, interestKeys, type TaskTie, trackTasks } from '../../domain/event-concerns.ts';
import { type EventRow, latestSeq } from '../../store/events.ts';
import { roleOf, tasksOf } from '../../store/inbox-events.ts';
import type { EventInterest, EventTail } from '../define-operation.ts';
import { defineOperation } from '../define-operation.ts';
import { sinceSeq, viewParam } from '../shared/lists.ts';
import { eventListParams } from './event-params.ts';
import { eventOutput, shapeEvent } from './event-schema.ts';

const streamInput = z.strictObject({
  since: eventListParams.since,
  types: eventListParams.types,
  subject: z.string().min(1).max(64).optional().describe('Only events about this resource id.'),
  view: viewParam,
  for: z.enum(['me']).optional().describe('`me`: what your inbox and `wait` get, and the events of the tasks you hold or are assigned; never your own actions (spec/realtime.md).'),
});

export const streamEvents = defineOperation({
  name: 'events_stream',
  summary: 'Follow the event timeline live (Server-Sent Events), from an event id onward, with no gap and no repeat.',
  description:
    'A frame per event, `data` as GET /events lists it. Resume with `Last-Event-ID` (EventSource sends it) or `since`; with neither, from now. ' +
    'A `: ping` every 15 s keeps proxies from closing an idle stream.',
  kind: 'stream',
  scope: 'events:read',
  approval: 'none',
  http: { method: 'GET', path: '/events/stream' },
  input: streamInput,
  output: eventOutput,
  async open(db, ctx, input) {
    let after: string | undefined = await latestSeq(db);
    if (input.since) {
      after = await sinceSeq(db, input.since);
    }
    const interest = input.for === 'me' ? await concerning(db, ctx.actor.id) : undefined;
    return new ShapedEvents(ctx.tail.follow(after, ctx.signal, interest), ctx.tail, input);
  },
  frameOf: (event) => ({ id: event.id, event: event.type ?? 'message' }),
});

type StreamedEvent = z.output<typeof eventOutput>;

/**
 * The followed rows the input's `types` and `subject` keep, each shaped once per view for every
 * stream. A plain iterator, not an async generator: an idle stream holds only its pending read
 * of the follower, not a suspended generator with its promises.
 */
class ShapedEvents implements AsyncIterableIterator<StreamedEvent> {
  readonly #batches: AsyncIterator<readonly EventRow[]>;
  readonly #tail: EventTail;
  readonly #input: z.output<typeof streamInput>;
  readonly #types: ReadonlySet<string> | undefined;
  readonly #key: string;
  #batch: readonly EventRow[] = [];
  #at = 0;

  constructor(batches: AsyncIterable<readonly EventRow[]>, tail: EventTail, input: z.output<typeof streamInput>) {
    this.#batches = batches[Symbol.asyncIterator]();
    this.#tail = tail;
    this.#input = input;
    this.#types = input.types ? new Set(input.types) : undefined;
    this.#key = `events_stream ${input.view ?? 'compact'}`;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<StreamedEvent>> {
    let value: StreamedEvent | undefined;
    try {
      value = this.#take();
    } catch (error) {
      // As an async generator would: the failure is the read's, not a throw at the caller.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (value !== undefined) return Promise.resolve({ done: false, value });
    // The batch is let go once taken: an idle stream holds no rows (nor, through them, their shapes).
    this.#batch = [];
    return this.#batches.next().then((read) => {
      if (read.done) return { done: true, value: undefined };
      this.#batch = read.value;
      this.#at = 0;
      return this.next();
    });
  }

  /** The next row of the batch in hand that the input keeps, shaped; undefined once the batch is spent. */
  #take(): StreamedEvent | undefined {
    const input = this.#input;
    while (this.#at < this.#batch.length) {
      const row = this.#batch[this.#at++];
      if (row === undefined) continue;
      if (this.#types && !this.#types.has(row.type)) continue;
      if (input.subject && row.subject !== input.subject) continue;
      return this.#tail.shared(row, this.#key, () => shapeEvent(row, input));
    }
    return undefined;
  }

  async return(): Promise<IteratorResult<StreamedEvent>> {
    this.#batch = [];
    await this.#batches.return?.();
    return { done: true, value: undefined };
  }
}

/**
 * What a `for=me` stream takes: the events that concern the caller, its role and tasks as they stand
 * when the stream opens, its tasks then kept by the events themselves (`trackTasks`), in commit order.
 */
async function concerning(db: Kysely<DB>, id: string): Promise<EventInterest> {
  const [role, held] = await Promise.all([roleOf(db, id), tasksOf(db, id)]);
  return new Concerning(id, role, new Map(held.map((t) => [t.id, { holds: t.holds, assigned: t.assigned }])));
}

/** The caller as `concerns` sees it and the interest its stream follows with: one object per open stream. */
class Concerning implements Concerned, EventInterest {
  readonly id: string;
  readonly role: string | null;
  readonly tasks: Map<string, TaskTie>;
  readonly keys: Set<string>;

  constructor(id: string, role: string | null, tasks: Map<string, TaskTie>) {
    this.id = id;
    this.role = role;
    this.tasks = tasks;
    this.keys = interestKeys(this);
  }

  admit(row: EventRow): boolean {
    const taken = concerns(row, this);
    const had = this.tasks.has(row.subject);
    trackTasks(this.tasks, row, this.id);
    // An event changes at most its own subject's place among the tasks.
    if (this.tasks.has(row.subject) !== had) {
      if (had) this.keys.delete(row.subject);
      else this.keys.add(row.subject);
    }
    return taken;
  }
}
