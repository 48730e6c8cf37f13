import { acceptedContent, type ClientCapabilities, type ElicitRequestFormParams, type InputRequests, inputRequired, type InputRequiredResult, inputResponse } from '@modelcontextprotocol/server';
import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { BatonError, toBatonError } from '../../errors.ts';
import { ULID } from '../../ids.ts';
import { answerAsk } from '../../operations/asks/answer-ask.ts';
import { getAsk } from '../../operations/asks/get-ask.ts';
import { type Ask, ASK_TEXT_MAX } from '../../operations/asks/ask-schema.ts';
import { mayInvoke } from '../../operations/authorization.ts';
import type { CallableOperation } from '../../operations/define-operation.ts';
import { listInbox } from '../../operations/inbox/list-inbox.ts';
import { markInbox } from '../../operations/inbox/mark-inbox.ts';
import type { Authenticated } from '../../service/authenticate.ts';
import type { Service } from '../../service/service.ts';
import { mcpCall } from './tools.ts';

/**
 * What MCP elicitation (spec/mcp.md § Elicitation) decides before a tool runs: ask the person at
 * the host first (`input_required`, the 2026-07-28 multi-round-trip result), refuse the call
 * because they declined, or run it (with what became of the asks they were shown).
 */
export type Elicitation =
  | { readonly kind: 'input_required'; readonly result: InputRequiredResult }
  | { readonly kind: 'declined'; readonly error: BatonError }
  | { readonly kind: 'run'; readonly elicited: readonly ElicitedAsk[] };

/** An ask shown to the caller in its host, and what became of it: `answered`, `declined`, `cancelled`, or the refusal's code. */
export interface ElicitedAsk {
  readonly ask_id: string;
  readonly outcome: string;
}

/** The reads a human opens their inbox with: open asks to them are elicited first. */
const ASK_TOOLS: ReadonlySet<string> = new Set(['inbox_list', 'wait']);
/** Asks shown in one call, at most: each is a form in the host, and one round shows them all. */
const ASKS_PER_CALL = 3;
const CONFIRM_KEY = 'confirm';
const ARGUMENTS_SHOWN = 400;
/** An input key names the inbox item and its ask, so the answer needs no server state between rounds. */
const ASK_KEY = new RegExp(`^(inb_${ULID}):(ask_${ULID})$`);
const confirmation = z.object({ decision: z.enum(['approve', 'deny']) });
const answerContent = z.object({ answer: z.string() });
const RUN: Elicitation = { kind: 'run', elicited: [] };

/** Whether a host takes form-mode elicitation: `elicitation: {}` (2025 form) or one naming `form`. */
export function takesFormElicitation(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

/**
 * Decides, for one tools/call by a human, whether to ask them something in their host first.
 * Only a human is asked (an agent's host is not the principal the token names), only where the
 * host declared form elicitation (`capable`), and every effect runs through the operations as the
 * caller. On the retry that carries `responses`, the answers are applied and nothing is asked again.
 */
export async function elicitFor(
  service: Service,
  operation: CallableOperation,
  args: Record<string, unknown>,
  caller: Authenticated & { readonly requestId: string },
  request: { readonly capable: boolean; readonly responses: Record<string, unknown> | undefined },
): Promise<Elicitation> {
  const { principal } = caller;
  if (principal.kind !== 'human') return RUN;
  if (operation.approval !== 'none' && principal.scopes.has('approvals:decide') && mayInvoke(principal, operation)) {
    return confirm(operation, args, request);
  }
  if (ASK_TOOLS.has(operation.name) && mayInvoke(principal, answerAsk)) return elicitAsks(service, caller, request);
  return RUN;
}

/**
 * A write that would wait for a human's approval runs at once for a human who decides approvals
 * (their call is the decision); over MCP the call is the model's, so the person confirms it first.
 */
function confirm(operation: CallableOperation, args: Record<string, unknown>, request: { readonly capable: boolean; readonly responses: Record<string, unknown> | undefined }): Elicitation {
  if (inputResponse(request.responses, CONFIRM_KEY).kind === 'missing') {
    if (!request.capable) return RUN;
    const { idempotency_key: _key, ...shown } = args;
    const message = `Approve ${operation.name}? ${operation.summary} Arguments: ${JSON.stringify(shown).slice(0, ARGUMENTS_SHOWN)}`;
    const requestedSchema: ElicitRequestFormParams['requestedSchema'] = {
      type: 'object',
      properties: { decision: { type: 'string', title: 'Decision', enum: ['approve', 'deny'], description: 'approve runs it now, as you; deny does not.' } },
      required: ['decision'],
    };
    return { kind: 'input_required', result: inputRequired({ inputRequests: { [CONFIRM_KEY]: inputRequired.elicit({ message, requestedSchema }) } }) };
  }
  if (acceptedContent(request.responses, CONFIRM_KEY, confirmation)?.decision === 'approve') return RUN;
  return { kind: 'declined', error: new BatonError('not_confirmed', `${operation.name} was not approved in your MCP host, so it did not run.`) };
}

async function elicitAsks(service: Service, caller: Authenticated & { readonly requestId: string }, request: { readonly capable: boolean; readonly responses: Record<string, unknown> | undefined }): Promise<Elicitation> {
  const run = (operation: CallableOperation, input: Record<string, unknown>, idempotencyKey?: string) => execute(service, caller, operation, input, idempotencyKey);
  const keys = Object.keys(request.responses ?? {}).filter((key) => ASK_KEY.test(key));
  if (keys.length > 0) {
    // One after another: answers to asks on one task lock the same task.
    const elicited: ElicitedAsk[] = [];
    for (const key of keys) elicited.push(await applyAnswer(run, key, request.responses));
    return { kind: 'run', elicited };
  }
  if (!request.capable) return RUN;
  const unread = await run(listInbox, { kind: ['ask'], state: ['unread'], limit: ASKS_PER_CALL });
  const inputRequests: InputRequests = {};
  for (const item of (unread.ok ? unread.body['data'] : []) as { id: string; ref_id: string }[]) {
    const read = await run(getAsk, { id: item.ref_id });
    const ask = read.body as unknown as Ask;
    if (read.ok && ask.status === 'open') inputRequests[`${item.id}:${ask.id}`] = inputRequired.elicit({ message: askMessage(ask), requestedSchema: answerSchema(ask) });
  }
  return Object.keys(inputRequests).length === 0 ? RUN : { kind: 'input_required', result: inputRequired({ inputRequests }) };
}

/** What the person did with one ask: answered it (as the caller), declined it (its inbox item is then read, so it is not asked again), or dismissed it. */
async function applyAnswer(run: (operation: CallableOperation, input: Record<string, unknown>, key?: string) => Promise<Executed>, key: string, responses: Record<string, unknown> | undefined): Promise<ElicitedAsk> {
  const [, itemId = '', askId = ''] = ASK_KEY.exec(key) ?? [];
  const view = inputResponse(responses, key);
  if (view.kind !== 'elicit' || view.action === 'cancel') return { ask_id: askId, outcome: 'cancelled' };
  if (view.action === 'decline') {
    await run(markInbox, { ids: [itemId], state: 'read' });
    return { ask_id: askId, outcome: 'declined' };
  }
  const answer = acceptedContent(responses, key, answerContent)?.answer;
  if (answer === undefined) return { ask_id: askId, outcome: 'validation_failed' };
  const read = await run(getAsk, { id: askId });
  if (!read.ok) return { ask_id: askId, outcome: String(read.body['code']) };
  const ask = read.body as unknown as Ask;
  // One key per ask and answer: a retried round replays the first answer instead of answering twice.
  const once = `elicitation:${askId}:${createHash('sha256').update(answer).digest('base64url').slice(0, 22)}`;
  const answered = await run(answerAsk, { id: askId, ...(ask.options.length > 0 ? { option: answer } : { text: answer }) }, once);
  return { ask_id: askId, outcome: answered.ok ? 'answered' : String(answered.body['code']) };
}

function askMessage(ask: Ask): string {
  return `${ask.asked_by.id} asks you on ${ask.task_id} (answer by ${ask.due_at}; then "${ask.default_answer.text}" applies): ${ask.question}`;
}

/** An ask with options is a choice of their labels; one without takes free text. */
function answerSchema(ask: Ask): ElicitRequestFormParams['requestedSchema'] {
  const answer = ask.options.length > 0 ? { type: 'string' as const, title: 'Answer', enum: ask.options.map((option) => option.label) } : { type: 'string' as const, title: 'Answer', minLength: 1, maxLength: ASK_TEXT_MAX };
  return { type: 'object', properties: { answer }, required: ['answer'] };
}

/** An operation's answer: its output, or (not `ok`) its problem document. */
interface Executed {
  readonly ok: boolean;
  readonly body: Record<string, unknown>;
}

/** Runs one operation as the caller, through the service like any tool call; a thrown failure is a problem too. */
async function execute(service: Service, caller: Authenticated & { readonly requestId: string }, operation: CallableOperation, input: Record<string, unknown>, idempotencyKey?: string): Promise<Executed> {
  try {
    const outcome = await service.execute(operation, input, mcpCall(caller, { idempotencyKey: operation.kind === 'write' ? (idempotencyKey ?? randomUUID()) : undefined }));
    return { ok: outcome.ok, body: JSON.parse(outcome.body) as Record<string, unknown> };
  } catch (error) {
    return { ok: false, body: { code: toBatonError(error).code } };
  }
}
