import { z } from 'zod';
import type { HttpMethod, Operation, Toolset } from '../../src/operations/define-operation.ts';

/**
 * The operations the open issues add (issue 38's budgets must hold with them): reservations, asks,
 * inbox (mentions are its items, kind=mention), wait, runs, budgets, stats, exports, schedules, templates, workspaces, sessions
 * and token rotation. Stand-ins, not the real ones: each has inputs, summary and description of the
 * size the registry's own have, and the tool set issue 38 decides for it (`work` only for the few
 * an agent's loop needs). test/agent/budgets.test.ts lists them beside the registry; once one lands,
 * the registry's own replaces its stand-in (same name).
 */
const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9A-Z]{26}$`));
const text = (max: number, what: string) => z.string().min(1).max(max).describe(what);
const list = { cursor: z.string().min(1).max(512).optional(), limit: z.int().min(1).max(100).default(25) };
const ttl = z.int().min(30).max(3600).optional().describe('Seconds, 30–3600 (default 300).');
const when = z.iso.datetime().optional();

type Shape = Record<string, z.ZodType>;
function planned(name: string, toolset: Toolset, method: HttpMethod, summary: string, input: Shape, description?: string): Operation {
  const base = {
    name,
    summary,
    ...(description ? { description } : {}),
    scope: 'tasks:write' as const,
    approval: 'none' as const,
    toolset,
    http: { method, path: `/${name.replace('_', '/')}` },
    input: z.strictObject(input),
    output: z.object({ id: z.string() }),
  };
  return method === 'GET' ? { ...base, kind: 'read', run: () => Promise.resolve({ id: '' }) } : { ...base, kind: 'write', run: () => Promise.resolve({ id: '' }) };
}

export const PLANNED_OPERATIONS: readonly Operation[] = [
  // The agent's loop: ask a human, wait for anything, hold a resource, report a run.
  planned('asks_create', 'work', 'POST', 'Ask a human a question about a task; the answer arrives in your inbox and through wait.', { task_id: id('tsk'), question: text(2000, 'What you need to know.'), options: z.array(z.string().max(200)).max(10).optional().describe('Answers to pick from, if any.'), to: z.string().max(30).optional().describe('`agt_…` of who should answer; else the task\'s creator.') }, 'Keep working on what the answer does not block; a task waiting on it shows `waiting_on`.'),
  planned('wait', 'work', 'POST', 'Block until something arrives for you (work you may claim, an answer, a mention, a review decision), or the timeout.', { cursor: z.string().max(512).optional().describe('The cursor of your last wait: nothing between two waits is missed.'), timeout_s: z.int().min(1).max(60).default(30), kinds: z.array(z.enum(['work', 'answer', 'mention', 'review'])).optional() }, 'Answers `items` and the `cursor` to pass next time; empty after the timeout.'),
  planned('reservations_acquire', 'work', 'POST', 'Reserve a named resource (a file, a branch, an environment) for a while, so other agents do not touch it.', { resource: text(200, 'The resource\'s name, as every holder spells it.'), task_id: id('tsk').optional(), ttl_s: ttl, wait_s: z.int().min(0).max(60).default(0).describe('Wait this long for a holder to let go.') }),
  planned('reservations_release', 'work', 'POST', 'Let go of a reservation you hold.', { id: id('res'), note: z.string().max(500).optional() }),
  planned('runs_usage', 'work', 'POST', 'Report what a run on a task used (tokens, cost, time), counted against its budget.', { task_id: id('tsk'), input_tokens: z.int().min(0).optional(), output_tokens: z.int().min(0).optional(), cost_usd: z.number().min(0).optional(), model: z.string().max(100).optional() }, 'A run over its budget is refused further claims: 409 budget_exhausted.'),
  planned('runs_log', 'work', 'POST', 'Append lines to the log of your run on a task; humans read it on the task page.', { task_id: id('tsk'), lines: z.array(z.string().max(2000)).min(1).max(100), level: z.enum(['info', 'warn', 'error']).default('info') }),
  // What humans answer and read, listed to them by default.
  planned('asks_answer', 'tasks', 'POST', 'Answer a question an agent asked; it is told at once.', { id: id('ask'), answer: text(4000, 'Your answer.') }),
  planned('asks_list', 'tasks', 'GET', 'List questions, open first: those asked of you, or about a task.', { state: z.enum(['open', 'answered', 'cancelled']).optional(), task_id: id('tsk').optional(), to: z.string().max(30).optional(), ...list }),
  planned('inbox_list', 'tasks', 'GET', 'Your inbox: questions, mentions, reviews and hand-ins waiting for you, newest first.', { state: z.enum(['unread', 'read', 'done']).optional(), kinds: z.array(z.enum(['ask', 'mention', 'review', 'handoff'])).optional(), ...list }),
  planned('inbox_mark', 'tasks', 'POST', 'Mark inbox items read or done.', { ids: z.array(id('inb')).min(1).max(100), state: z.enum(['read', 'done']) }),
  // The rest: listed on request (`admin`).
  planned('asks_get', 'admin', 'GET', 'Read a question and its answer.', { id: id('ask') }),
  planned('asks_cancel', 'admin', 'POST', 'Withdraw a question nobody answered yet.', { id: id('ask'), reason: z.string().max(500).optional() }),
  planned('reservations_heartbeat', 'admin', 'POST', 'Keep a reservation alive: its expiry moves to now + TTL.', { id: id('res'), ttl_s: ttl }),
  planned('reservations_list', 'admin', 'GET', 'List reservations: who holds what, until when.', { resource: z.string().max(200).optional(), holder: z.string().max(30).optional(), ...list }),
  planned('reservations_get', 'admin', 'GET', 'Read one reservation.', { id: id('res') }),
  planned('runs_list', 'admin', 'GET', 'List runs on tasks, newest first, with what each used.', { task_id: id('tsk').optional(), agent: z.string().max(30).optional(), ...list }),
  planned('runs_get', 'admin', 'GET', 'Read one run: usage and log.', { id: id('run'), log_lines: z.int().min(0).max(1000).default(100) }),
  planned('budgets_create', 'admin', 'POST', 'Set a spending budget for a label, an agent or everything, per period.', { applies_to: z.string().max(100), limit_usd: z.number().min(0), period: z.enum(['day', 'week', 'month']) }, 'Work over budget is refused new claims until the period turns.'),
  planned('budgets_update', 'admin', 'PATCH', 'Change a budget.', { id: id('bud'), limit_usd: z.number().min(0).optional(), period: z.enum(['day', 'week', 'month']).optional() }),
  planned('budgets_list', 'admin', 'GET', 'List budgets and what each has spent this period.', { ...list }),
  planned('insight_get', 'admin', 'GET', 'Throughput, wait and cycle times, and failure rates, per label and agent, over a period.', { from: when, to: when, labels: z.array(z.string().max(50)).max(20).optional() }),
  planned('schedules_create', 'admin', 'POST', 'Create a schedule that makes a task from a template on a cron expression.', { cron: text(100, 'Five-field cron, in the schedule\'s time zone.'), timezone: z.string().max(64).default('UTC'), template_id: id('tpl'), enabled: z.boolean().default(true) }),
  planned('schedules_update', 'admin', 'PATCH', 'Change a schedule.', { id: id('sch'), cron: z.string().max(100).optional(), timezone: z.string().max(64).optional(), enabled: z.boolean().optional() }),
  planned('schedules_delete', 'admin', 'DELETE', 'Delete a schedule; tasks it made stay.', { id: id('sch') }),
  planned('schedules_list', 'admin', 'GET', 'List schedules and when each runs next.', { ...list }),
  planned('schedules_preview', 'admin', 'POST', 'The next times a cron expression fires, to check it before saving.', { cron: z.string().max(100), timezone: z.string().max(64).default('UTC'), count: z.int().min(1).max(20).default(5) }),
  planned('templates_create', 'admin', 'POST', 'Save a task template: title, description, labels and subtasks to make at once.', { name: text(100, 'Unique name.'), title: z.string().max(200), description: z.string().max(4000).optional(), labels: z.array(z.string().max(50)).max(20).optional(), subtasks: z.array(z.string().max(200)).max(50).optional() }),
  planned('templates_list', 'admin', 'GET', 'List task templates.', { ...list }),
  planned('templates_get', 'admin', 'GET', 'Read a task template.', { id: id('tpl') }),
  planned('templates_instantiate', 'admin', 'POST', 'Make a task (and its subtasks) from a template, with values for its placeholders.', { id: id('tpl'), values: z.record(z.string(), z.string().max(500)).optional(), parent_id: id('tsk').optional() }),
  planned('workspaces_list', 'admin', 'GET', 'List the workspaces you belong to.', { ...list }),
  planned('sessions_list', 'admin', 'GET', 'List your signed-in sessions, to end one you do not recognise.', { ...list }),
  planned('tokens_rotate', 'admin', 'POST', 'Replace a token with a new one; the old one keeps working for a grace period.', { id: id('tok'), grace_s: z.int().min(0).max(86_400).default(3600) }),
];
