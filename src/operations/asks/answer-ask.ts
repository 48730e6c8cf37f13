import { z } from 'zod';
import { ROLE_PREFIX, targetRole } from '../../domain/roles.ts';
import { BatonError } from '../../errors.ts';
import { findAgent } from '../../store/agents.ts';
import { findAsk, lockAsk, lockAskTask } from '../../store/asks.ts';
import { insertInboxItems } from '../../store/inbox.ts';
import { mentionedIn } from '../comments/comment-access.ts';
import type { Tx } from '../../store/connection.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { closeAsk, inboxItem } from './ask-flow.ts';
import { answerOf, ASK_TEXT_MAX, askId, askNotFound, askOutput, currentTarget, toAsk } from './ask-schema.ts';

export const answerAsk = defineOperation({
  name: 'asks_answer',
  summary: 'Answer an ask addressed to you or your role: an `option` label, or free `text`. The first answer wins.',
  description: 'After the deadline: 409 ask_closed (the default applies). `@name` in the text mentions that principal.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'tasks',
  http: { method: 'POST', path: '/asks/{id}/answer' },
  input: z.strictObject({ id: askId, text: z.string().trim().min(1).max(ASK_TEXT_MAX).optional(), option: z.string().max(80).optional() }),
  output: askOutput,
  run: (tx, ctx, input) => answer(tx, ctx, input),
});

/** Whether the caller is a person who holds, now, a role among those the ask has gone to (`role:<role>`). */
async function holdsAskedRole(tx: Tx, actor: { id: string; kind: string }, asked: readonly string[]): Promise<boolean> {
  if (actor.kind !== 'human' || !asked.some((t) => targetRole(t) !== undefined)) return false;
  const me = await findAgent(tx, actor.id);
  const role = me && !me.disabled ? me.role : null;
  return role !== null && asked.includes(`${ROLE_PREFIX}${role}`);
}

/** Answers an ask as the caller, in its transaction (asks_answer, and a link in a notification: links_redeem). */
export async function answer(tx: Tx, ctx: OperationContext, input: { id: string; text?: string | undefined; option?: string | undefined }): Promise<z.infer<typeof askOutput>> {
  const found = await findAsk(tx, input.id);
  if (!found) throw askNotFound(input.id);
  await lockAskTask(tx, found.task_id);
  const row = await lockAsk(tx, input.id);
  if (!row) throw askNotFound(input.id);
  const asked = row.chain.slice(0, row.step + 1);
  if (!asked.includes(ctx.actor.id) && !(ctx.actor.kind === 'human' && ctx.actor.scopes.has('agents:admin')) && !(await holdsAskedRole(tx, ctx.actor, asked))) {
    const to = currentTarget(row);
    throw new BatonError('not_addressee', `Ask ${row.id} is addressed to ${to}, not you.`, { extra: { to } });
  }
  if (row.status !== 'open') {
    throw new BatonError('ask_closed', `Ask ${row.id} is ${row.status}${row.answer ? `: "${row.answer.text}"` : ''}.`, { extra: { ask_status: row.status, answer: row.answer } });
  }
  if (row.due_at <= ctx.now) {
    const last = row.step + 1 >= row.chain.length;
    throw new BatonError(
      'ask_closed',
      last
        ? `Ask ${row.id} passed its deadline at ${row.due_at.toISOString()}: the default answer "${row.default_answer.text}" applies.`
        : `Ask ${row.id} passed its deadline at ${row.due_at.toISOString()}: it goes to ${row.chain[row.step + 1] ?? ''} next.`,
      { extra: { ask_status: last ? 'defaulted' : 'open', answer: last ? row.default_answer : null } },
    );
  }
  const answer = answerOf(row.options, input, input.option === undefined ? '/text' : '/option');
  const closed = await closeAsk(tx, row, { status: 'answered', answer }, { id: ctx.actor.id, kind: ctx.actor.kind, now: ctx.now, ids: ctx.ids });
  ctx.emit(closed.event);
  if (input.text !== undefined) {
    const mentioned = (await mentionedIn(tx, input.text, '/text')).filter((p) => p.id !== ctx.actor.id);
    await insertInboxItems(tx, mentioned.map((p) => inboxItem(ctx.ids, ctx.now, { principal_id: p.id, kind: 'mention', task_id: row.task_id, ref_id: row.id, by_id: ctx.actor.id, excerpt: input.text?.slice(0, 200) ?? '' })));
    for (const p of mentioned) {
      ctx.emit({ type: 'comment.mentioned', subject: p.id, data: { task_id: row.task_id, ask_id: row.id, principal_kind: p.kind, excerpt: input.text.slice(0, 200) } });
    }
  }
  return toAsk(closed.ask);
}
