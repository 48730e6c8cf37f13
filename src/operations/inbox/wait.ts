import { z } from 'zod';
import { latestSeq } from '../../store/events.ts';
import { eventsFor } from '../../store/inbox-events.ts';
import { peekClaimable } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';
import { mayCall } from '../authorization.ts';
import { LONG_POLL_MAX_S, longPoll } from '../shared/long-poll.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../store/schema.ts';
import { eventData } from '../events/event-data.ts';

/** Events one wait answers with at most; the cursor resumes after the last. */
const WAIT_ITEMS_MAX = 50;

const waitItem = z.object({
  event_id: z.string(),
  type: z.string().describe('ask.created, ask.escalated (asked of you), ask.answered, ask.defaulted (your ask), comment.mentioned, task.changes_requested, task.status_changed (your hand-in approved), task.assigned.'),
  task_id: z.string(),
  by: z.string(),
  data: z.record(z.string(), z.unknown()),
  at: z.iso.datetime(),
});

export const wait = defineOperation({
  name: 'wait',
  summary: 'Block (at most 60 s) until something arrives for you: an ask, an answer, a mention, a review decision, or work to claim.',
  description:
    'Pass the returned `cursor` as `after` to the next wait: nothing between two waits is missed. `work`: a task you may claim now (level-triggered; `work=no` to leave it out). `timed_out`: nothing came.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'work',
  http: { method: 'GET', path: '/wait' },
  input: z.strictObject({
    after: z.string().min(1).max(512).optional().describe('The `cursor` of your last wait.'),
    timeout_s: z.coerce.number().int().min(0).max(LONG_POLL_MAX_S).default(30),
    work: z.enum(['yes', 'no']).optional().describe('Report claimable work (default yes for agents that may claim).'),
  }),
  output: z.object({
    items: z.array(waitItem).max(WAIT_ITEMS_MAX),
    work: z.object({ task_id: z.string(), title: z.string() }).nullable(),
    cursor: z.string().describe('Pass as `after` to the next wait.'),
    timed_out: z.boolean(),
  }),
  waits: true,
  // The next look starts at this one's cursor: what arrives between two polls of a task is not missed.
  followable: { seconds: 'timeout_s', settles: (output) => output.items.length > 0 || output.work !== null, resume: (input, output) => ({ ...input, after: output.cursor }) },
  async run(_db, ctx, input) {
    const me = ctx.actor.id;
    const wantsWork = input.work !== undefined ? input.work === 'yes' : (ctx.actor.kind === 'agent' && mayCall(ctx.actor, 'tasks_claim_next', 'tasks:claim'));
    let after = ctx.cursors.decode('wait', input.after) ?? (await ctx.inWorkspace(latestSeq));
    const check = async (db: Kysely<DB>) => {
      const head = await latestSeq(db);
      const rows = await eventsFor(db, me, after, head, WAIT_ITEMS_MAX);
      const work = wantsWork ? await peekClaimable(db, me, ctx.clock.now()) : undefined;
      const last = rows.at(-1);
      if (rows.length === 0) after = BigInt(head) > BigInt(after) ? head : after;
      else if (last) after = last.seq;
      if (rows.length === 0 && !work) return undefined;
      return { rows, work };
    };
    const found = await longPoll(ctx, input.timeout_s, check);
    return {
      items: (found?.rows ?? []).map((row) => {
        const data = eventData({ type: row.type, data: row.data ?? {} });
        return { event_id: row.id, type: row.type, task_id: typeof data['task_id'] === 'string' ? data['task_id'] : row.subject, by: row.actor_id, data, at: row.created_at.toISOString() };
      }),
      work: found?.work ? { task_id: found.work.id, title: found.work.title } : null,
      cursor: ctx.cursors.encode('wait', after),
      timed_out: found === undefined,
    };
  },
});
