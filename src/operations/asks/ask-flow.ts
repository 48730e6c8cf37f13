import { isRole, targetRole } from '../../domain/roles.ts';
import type { Ids } from '../../ids.ts';
import { adjustOpenAsks, type AskAddressee, type AskRow, escalateAsk, lockOpenAsksOfTask, settleAsk } from '../../store/asks.ts';
import type { Tx } from '../../store/connection.ts';
import { adjustOverdueAsks, escalationTargets } from '../../store/escalation.ts';
import { closeInboxItems, insertInboxItems, type NewInboxItem } from '../../store/inbox.ts';
import type { AskAnswer } from '../../store/schema.ts';
import type { EventDraft, OperationContext } from '../define-operation.ts';
import { currentTarget } from './ask-schema.ts';

/** Who closes an ask, and when. */
export interface Closer {
  readonly id: string;
  readonly kind: 'human' | 'agent' | 'system';
  readonly now: Date;
  readonly ids: Ids;
}

/** An inbox item, made now. */
export function inboxItem(ids: Ids, now: Date, item: Omit<NewInboxItem, 'id' | 'created_at'>): NewInboxItem {
  return { ...item, id: ids.make('inb'), created_at: now };
}

/** The addressee a chain entry names (entries were checked when the ask was made). */
export function addresseeOf(target: string): AskAddressee {
  const role = targetRole(target);
  if (role === undefined) return { id: target };
  if (!isRole(role)) throw new Error(`not a role: ${target}`);
  return { role };
}

/**
 * Puts an ask in the inbox of whom `target` names: the principal (unless it is `except`), or every
 * enabled human holding the role but the asker, whom its own ask does not wait on. Each item is
 * emailed and posted at once; all of them turn done when the ask closes.
 */
export async function deliverAsk(tx: Tx, target: string, item: Omit<NewInboxItem, 'id' | 'created_at' | 'principal_id' | 'kind'>, at: { ids: Ids; now: Date; except?: string }): Promise<void> {
  const to = targetRole(target) === undefined ? [target].filter((id) => id !== at.except) : (await escalationTargets(tx, [target])).filter((id) => id !== item.by_id);
  await insertInboxItems(
    tx,
    to.map((principal) => inboxItem(at.ids, at.now, { ...item, principal_id: principal, kind: 'ask' })),
  );
}

/**
 * Closes a locked open ask (its task locked first): answered, defaulted at its deadline, or cancelled.
 * Writes the ask, the task's count, the asker's inbox item and the addressees' items done; returns the
 * event to write in the same transaction.
 */
export async function closeAsk(tx: Tx, row: AskRow, how: { status: 'answered' | 'defaulted' | 'cancelled'; answer: AskAnswer | null; reason?: string }, by: Closer): Promise<{ ask: AskRow; event: EventDraft }> {
  const ask = await settleAsk(tx, row.id, { status: how.status, answer: how.answer, answered_by_id: by.id, answered_by_kind: by.kind, answered_at: by.now });
  await adjustOpenAsks(tx, row.task_id, -1);
  if (row.overdue_at) await adjustOverdueAsks(tx, row.task_id, -1);
  await closeInboxItems(tx, row.id, 'ask', by.now);
  if (how.status !== 'cancelled' && row.asked_by_id !== by.id) {
    const excerpt = `${row.question.slice(0, 100)} → ${how.answer?.text.slice(0, 100) ?? ''}`;
    await insertInboxItems(tx, [inboxItem(by.ids, by.now, { principal_id: row.asked_by_id, kind: 'answer', task_id: row.task_id, ref_id: row.id, by_id: by.id, excerpt })]);
  }
  const type = how.status === 'answered' ? 'ask.answered' : how.status === 'defaulted' ? 'ask.defaulted' : 'ask.cancelled';
  const data = {
    ask_id: row.id,
    asked_by: row.asked_by_id,
    to: currentTarget(row),
    ...(how.answer ? { answer: how.answer, defaulted: how.status === 'defaulted' } : {}),
    ...(how.reason ? { reason: how.reason } : {}),
  };
  return { ask, event: { type, subject: row.task_id, data, ...(by.kind === 'system' ? { by: 'system' as const } : {}) } };
}

/** Hands a locked open ask past its deadline to the next addressee of its chain. */
export async function escalate(tx: Tx, row: AskRow, by: Closer): Promise<{ ask: AskRow; event: EventDraft }> {
  const next = row.chain[row.step + 1] ?? currentTarget(row);
  const ask = await escalateAsk(tx, row.id, addresseeOf(next), new Date(by.now.getTime() + row.timeout_s * 1000));
  await deliverAsk(tx, next, { task_id: row.task_id, ref_id: row.id, by_id: row.asked_by_id, excerpt: row.question.slice(0, 200), overdue_at: row.overdue_at }, by);
  return { ask, event: { type: 'ask.escalated', subject: row.task_id, data: { ask_id: row.id, asked_by: row.asked_by_id, from: currentTarget(row), to: next, due_at: ask.due_at.toISOString() }, by: 'system' } };
}

/** Closes every open ask of a locked task that ended (cancelled, done, deleted): each gets `ask.cancelled`. */
export async function cancelAsksOfTask(tx: Tx, taskId: string, reason: string, by: Closer): Promise<EventDraft[]> {
  const open = await lockOpenAsksOfTask(tx, taskId);
  const events: EventDraft[] = [];
  for (const row of open) events.push((await closeAsk(tx, row, { status: 'cancelled', answer: null, reason }, by)).event);
  return events;
}

/** A locked task that ends (cancelled, done or deleted) closes its open asks, in the same transaction. */
export async function closeAsksOfEndedTask(tx: Tx, ctx: OperationContext, task: { id: string; open_asks: number }, reason: string): Promise<void> {
  if (task.open_asks === 0) return;
  for (const event of await cancelAsksOfTask(tx, task.id, reason, { id: ctx.actor.id, kind: ctx.actor.kind, now: ctx.now, ids: ctx.ids })) ctx.emit(event);
}
