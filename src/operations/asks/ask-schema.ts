import { z } from 'zod';
import { ROLE_PREFIX, ROLES } from '../../domain/roles.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import type { AskRow } from '../../store/asks.ts';
import type { AskAnswer, AskOption } from '../../store/schema.ts';
import { ASK_STATUSES } from '../../domain/ask-statuses.ts';

export const ASK_TEXT_MAX = 2000;
export const ASK_OPTIONS_MAX = 10;
export const ASK_ESCALATION_MAX = 5;
/** The longest an ask may wait for one addressee: a week. */
export const ASK_TIMEOUT_MAX_S = 7 * 24 * 3600;

export const askId = z.string().regex(new RegExp(idPattern('ask')), 'must be an ask id: ask_ followed by a 26-character ULID');

export const askOption = z.strictObject({
  label: z.string().trim().min(1).max(80),
  value: z.string().max(200).optional(),
});

const answerOutput = z.object({ text: z.string(), option: z.string().optional() });
const by = z.object({ id: z.string(), kind: z.enum(['human', 'agent', 'system']) });

export const askOutput = z.object({
  id: z.string(),
  task_id: z.string(),
  question: z.string(),
  options: z.array(z.object({ label: z.string(), value: z.string().optional() })).max(ASK_OPTIONS_MAX),
  to: z.string().describe('Who is asked now: a principal id, or `role:<role>` (every enabled human with it).'),
  to_role: z.enum(ROLES).optional().describe('The role asked now; absent when `to` is a principal.'),
  escalation: z.array(z.string()).max(ASK_ESCALATION_MAX).describe('Who is asked next, in order, as each deadline passes (ids, `role:<role>`).'),
  due_at: z.iso.datetime(),
  default_answer: answerOutput,
  status: z.enum(ASK_STATUSES),
  answer: answerOutput.nullable().describe('`option` is the chosen label; `text` its value (or the free text).'),
  answered_by: by.nullable(),
  defaulted: z.boolean().describe('The answer is the default, applied at the deadline.'),
  answered_at: z.iso.datetime().nullable(),
  asked_by: z.object({ id: z.string(), kind: z.enum(['human', 'agent']) }),
  created_at: z.iso.datetime(),
  overdue_at: z.iso.datetime().optional().describe('When it went past its SLA (escalated); absent before.'),
});
export type Ask = z.infer<typeof askOutput>;

export function toAsk(row: AskRow): Ask {
  return {
    id: row.id,
    task_id: row.task_id,
    question: row.question,
    options: row.options,
    to: currentTarget(row),
    ...(row.to_role ? { to_role: row.to_role } : {}),
    escalation: row.chain.slice(row.step + 1),
    due_at: row.due_at.toISOString(),
    default_answer: row.default_answer,
    status: row.status,
    answer: row.answer,
    answered_by: row.answered_by_id && row.answered_by_kind ? { id: row.answered_by_id, kind: row.answered_by_kind } : null,
    defaulted: row.status === 'defaulted',
    answered_at: row.answered_at?.toISOString() ?? null,
    asked_by: { id: row.asked_by_id, kind: row.asked_by_kind },
    created_at: row.created_at.toISOString(),
    ...(row.overdue_at ? { overdue_at: row.overdue_at.toISOString() } : {}),
  };
}

/** Who an ask is put to now, as its chain names it: a principal id, or `role:<role>`. */
export function currentTarget(row: Pick<AskRow, 'to_id' | 'to_role'>): string {
  return row.to_id ?? `${ROLE_PREFIX}${row.to_role ?? ''}`;
}

export function askNotFound(id: string): BatonError {
  return new BatonError('not_found', `No ask ${id}.`, { hint: "[[asks_list]] lists a task's asks." });
}

/**
 * The answer `text` (or `option`) makes of an ask: with options, one of their labels (or values),
 * stored as the option's label and its value (the label when it has none); free text as given.
 */
export function answerOf(options: readonly AskOption[], given: { text?: string | undefined; option?: string | undefined }, pointer: string): AskAnswer {
  if (options.length === 0) {
    if (given.text === undefined) throw invalidAnswer(pointer, 'text is required: the ask takes free text');
    return { text: given.text };
  }
  const wanted = given.option ?? given.text;
  const chosen = options.find((o) => o.label === wanted || (o.value !== undefined && o.value === wanted));
  if (!chosen) throw invalidAnswer(pointer, `option must be one of: ${options.map((o) => o.label).join(', ')}`);
  return { text: chosen.value ?? chosen.label, option: chosen.label };
}

function invalidAnswer(pointer: string, detail: string): BatonError {
  return new BatonError('validation_failed', detail, { extra: { errors: [{ pointer, detail, location: 'body' }] } });
}
