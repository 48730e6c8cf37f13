import { z } from 'zod';
import { isRole, ROLE_PREFIX, ROLES, targetRole } from '../../domain/roles.ts';
import { BatonError } from '../../errors.ts';
import { adjustOpenAsks, insertAsk } from '../../store/asks.ts';
import type { Tx } from '../../store/connection.ts';
import { escalationTargets, heldRoles } from '../../store/escalation.ts';
import { lockLiveTask } from '../comments/comment-access.ts';
import { defineOperation } from '../define-operation.ts';
import { namesMatch, resolveMentions } from '../shared/principals.ts';
import { taskId, timeText } from '../tasks/task-schema.ts';
import { addresseeOf, deliverAsk } from './ask-flow.ts';
import { answerOf, ASK_ESCALATION_MAX, ASK_OPTIONS_MAX, ASK_TEXT_MAX, ASK_TIMEOUT_MAX_S, askOption, askOutput, currentTarget, toAsk } from './ask-schema.ts';

const principalName = z.string().min(1).max(100);

export const createAsk = defineOperation({
  name: 'asks_create',
  summary: 'Ask a principal or a role a question on a task, with a deadline and a default answer.',
  description: 'Free text or a choice of `options`; `escalation` names who is asked next at each deadline. `role:<role>` asks every enabled human with it; the first answer wins. The answer: asks_get `wait_s`, `wait`, the stream (`ask.answered`) or your next claim.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/tasks/{id}/asks', successStatus: 201 },
  input: z.strictObject({
    id: taskId,
    question: z.string().trim().min(1).max(ASK_TEXT_MAX),
    options: z.array(askOption).max(ASK_OPTIONS_MAX).default([]),
    to: principalName.describe('Who is asked: a principal id or name, or `role:<role>`.'),
    escalation: z.array(principalName).max(ASK_ESCALATION_MAX).default([]),
    timeout_s: z.int().min(1).max(ASK_TIMEOUT_MAX_S).optional().describe('Seconds each addressee gets (or give due_at).'),
    // Checked by a refinement, as every time a caller sets: Zod's ISO pattern cost every agent's tool listing ~400 bytes.
    due_at: timeText('due_at').optional(),
    default: z.strictObject({ text: z.string().max(ASK_TEXT_MAX).optional(), option: z.string().max(80).optional() }).describe('Applied at the last deadline.'),
  }),
  output: askOutput,
  async run(tx, ctx, input) {
    const task = await lockLiveTask(tx, input.id);
    if (task.status === 'done' || task.status === 'cancelled') {
      throw new BatonError('invalid_transition', `Task ${task.id} is ${task.status}; ask on an open task.`, { extra: { current_status: task.status } });
    }
    const dueAt = deadline(ctx.now, input);
    const chain = await resolveChain(tx, [input.to, ...input.escalation]);
    const first = addresseeOf(chain[0] ?? '');
    const options = input.options.map((o) => (o.value === undefined ? { label: o.label } : { label: o.label, value: o.value }));
    const fallback = answerOf(options, input.default, '/default');
    const row = await insertAsk(tx, {
      id: ctx.ids.make('ask'),
      task_id: task.id,
      question: input.question,
      options,
      to_id: first.id ?? null,
      to_role: first.role ?? null,
      chain,
      timeout_s: input.timeout_s ?? Math.max(1, Math.round((dueAt.getTime() - ctx.now.getTime()) / 1000)),
      due_at: dueAt,
      default_answer: fallback,
      asked_by_id: ctx.actor.id,
      asked_by_kind: ctx.actor.kind,
      created_at: ctx.now,
    });
    await adjustOpenAsks(tx, task.id, 1);
    const to = currentTarget(row);
    await deliverAsk(tx, to, { task_id: task.id, ref_id: row.id, by_id: ctx.actor.id, excerpt: row.question.slice(0, 200) }, { ids: ctx.ids, now: ctx.now, except: ctx.actor.id });
    ctx.emit({ type: 'ask.created', subject: task.id, data: { ask_id: row.id, asked_by: ctx.actor.id, to, question: row.question.slice(0, 200), due_at: dueAt.toISOString() } });
    return toAsk(row);
  },
});

/**
 * The chain an ask goes down: principal ids, and `role:<role>` for a role some enabled human holds
 * (an ask to a role no one holds would wait on nobody: `no_role_holder`). Repeats are dropped.
 */
async function resolveChain(tx: Tx, targets: readonly string[]): Promise<string[]> {
  const pointer = (i: number) => (i === 0 ? '/to' : `/escalation/${i - 1}`);
  const names = targets.filter((t) => targetRole(t) === undefined);
  const principals = await resolveMentions(tx, names, '/to');
  const chain: string[] = [];
  for (const [i, target] of targets.entries()) {
    const role = targetRole(target);
    if (role === undefined) {
      const found = principals.find((p) => p.id === target || namesMatch(p.name, target));
      if (found) chain.push(found.id);
      continue;
    }
    if (!isRole(role)) {
      const detail = `must be role:${ROLES.join(', role:')}`;
      throw new BatonError('validation_failed', `${target} names no role.`, { extra: { errors: [{ pointer: pointer(i), detail, location: 'body' }] } });
    }
    if ((await escalationTargets(tx, [target])).length === 0) {
      const holders = new Set(await heldRoles(tx));
      const held = ROLES.filter((r) => holders.has(r));
      const others = held.length === 0 ? 'no role is held here' : `roles held here: ${held.join(', ')}`;
      throw new BatonError('no_role_holder', `No enabled human holds the role ${role}: an ask to ${target} would wait on nobody (${others}).`, {
        extra: { role, held_roles: held, errors: [{ pointer: pointer(i), detail: 'no enabled human holds this role', location: 'body' }] },
      });
    }
    chain.push(`${ROLE_PREFIX}${role}`);
  }
  return [...new Set(chain)];
}

function deadline(now: Date, input: { timeout_s?: number | undefined; due_at?: string | undefined }): Date {
  if ((input.timeout_s === undefined) === (input.due_at === undefined)) {
    throw new BatonError('validation_failed', 'Give exactly one of timeout_s and due_at.', { extra: { errors: [{ pointer: '/timeout_s', detail: 'exactly one of timeout_s and due_at', location: 'body' }] } });
  }
  const at = input.due_at === undefined ? new Date(now.getTime() + (input.timeout_s ?? 0) * 1000) : new Date(input.due_at);
  if (at <= now || at.getTime() - now.getTime() > ASK_TIMEOUT_MAX_S * 1000) {
    throw new BatonError('validation_failed', `due_at must be in the future, at most ${ASK_TIMEOUT_MAX_S} s away.`, { extra: { errors: [{ pointer: '/due_at', detail: 'in the future, at most a week away', location: 'body' }] } });
  }
  return at;
}
