import { randomUUID } from 'node:crypto';
import type { AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksResponse, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk';
import { A2AError, ExtendedAgentCardNotConfiguredError, PushNotificationNotSupportedError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server';
import type { Authenticated } from '../../service/authenticate.ts';
import type { Service } from '../../service/service.ts';
import type { CallableOperation } from '../../operations/define-operation.ts';
import { createComment } from '../../operations/comments/create-comment.ts';
import { streamEvents } from '../../operations/events/stream-events.ts';
import { createTask } from '../../operations/tasks/create-task.ts';
import { getTask } from '../../operations/tasks/get-task.ts';
import { TITLE_MAX } from '../../operations/tasks/task-schema.ts';
import { updateTask } from '../../operations/tasks/update-task.ts';
import { restDialect } from '../rest/dialect.ts';
import { A2A_TASK_FIELDS, type BatonTask, isTerminal, taskInputOf, toA2ATask } from './task-mapping.ts';

/** The authenticated Baton caller of one A2A request, and the signal that ends its streams. */
export class BatonUser implements User {
  readonly caller: Authenticated & { readonly requestId: string };
  readonly signal: AbortSignal;
  constructor(caller: Authenticated & { readonly requestId: string }, signal: AbortSignal) {
    this.caller = caller;
    this.signal = signal;
  }
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.caller.principal.id;
  }
}

/**
 * A2A requests served as Baton operations, as the authenticated caller: SendMessage is tasks_create
 * (or, naming a task, comments_create on it), GetTask is tasks_get, CancelTask is tasks_update to
 * `cancelled`, and the streams follow the task's events (events_stream) and re-read it on each.
 * Nothing is stored here: Baton's task, state machine and audit are the only truth.
 */
export function batonRequestHandler(service: Service, card: AgentCard): A2ARequestHandler {
  // Hints name REST routes: an A2A client holds a Baton token and can follow them.
  const dialect = restDialect(service.operations);
  const run = async (user: BatonUser, operation: CallableOperation, input: Record<string, unknown>, idempotencyKey?: string): Promise<Record<string, unknown>> => {
    const { caller } = user;
    const outcome = await service.execute(operation, input, {
      principal: caller.principal,
      idempotencyKey: operation.kind === 'write' ? (idempotencyKey ?? randomUUID()) : undefined,
      expectedVersion: undefined,
      requestId: caller.requestId,
      budget: caller.budget,
      dialect,
    });
    const body = JSON.parse(outcome.body) as Record<string, unknown>;
    if (!outcome.ok) throw refusal(body);
    return body;
  };
  const read = async (user: BatonUser, id: string): Promise<BatonTask> => (await run(user, getTask, { id, fields: A2A_TASK_FIELDS })) as unknown as BatonTask;

  /** Status and artifact updates for one task until it ends (or the client goes), from its events. */
  async function* follow(user: BatonUser, first: BatonTask): AsyncGenerator<StreamResponse> {
    // Ends when the client goes, or when this generator does.
    const stop = new AbortController();
    const leave = () => stop.abort();
    if (user.signal.aborted) stop.abort();
    else user.signal.addEventListener('abort', leave, { once: true });
    const events = await service.subscribe(streamEvents, { subject: first.id }, { principal: user.caller.principal, stop }).catch((error: unknown) => {
      user.signal.removeEventListener('abort', leave);
      throw error;
    });
    let shown = toA2ATask(first, service.baseUrl);
    const sent = new Set(shown.artifacts.map((a) => a.artifactId));
    try {
      // Read once more after subscribing: a change between the first read and the subscription is not missed.
      let current: Task | undefined = toA2ATask(await read(user, first.id), service.baseUrl);
      const iterator = events[Symbol.asyncIterator]();
      while (current) {
        for (const artifact of current.artifacts.filter((a) => !sent.has(a.artifactId))) {
          sent.add(artifact.artifactId);
          yield { payload: { $case: 'artifactUpdate', value: { taskId: current.id, contextId: current.contextId, artifact, append: false, lastChunk: true, metadata: undefined } } };
        }
        if (current.status?.state !== shown.status?.state) {
          yield { payload: { $case: 'statusUpdate', value: { taskId: current.id, contextId: current.contextId, status: current.status, metadata: current.metadata } } };
        }
        shown = current;
        if (current.status && isTerminal(current.status.state)) return;
        const next = await iterator.next();
        current = next.done ? undefined : toA2ATask(await read(user, first.id), service.baseUrl);
      }
    } finally {
      user.signal.removeEventListener('abort', leave);
      stop.abort();
    }
  }

  const send = async (params: SendMessageRequest, user: BatonUser): Promise<BatonTask> => {
    const message = params.message;
    if (!message) throw new RequestMalformedError('SendMessage needs a message.');
    if (message.taskId !== '') {
      // A follow-up on a task the client handed over: it joins the task's discussion.
      const text = taskInputOf(message, Number.MAX_SAFE_INTEGER).title;
      await run(user, createComment, { id: message.taskId, body: text }, keyOf(message));
      return read(user, message.taskId);
    }
    const input = taskInputOf(message, TITLE_MAX);
    if (input.title === '') throw new RequestMalformedError('The message has no text: its first line becomes the task title.');
    const created = await run(user, createTask, input, keyOf(message));
    return read(user, String(created['id']));
  };

  return {
    getAgentCard: async () => card,
    getAuthenticatedExtendedAgentCard: async () => {
      throw new ExtendedAgentCardNotConfiguredError('Baton publishes one Agent Card, the same for every caller.');
    },
    async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
      return toA2ATask(await send(params, userOf(context)), service.baseUrl);
    },
    async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse> {
      const user = userOf(context);
      const task = await send(params, user);
      yield { payload: { $case: 'task', value: toA2ATask(task, service.baseUrl) } };
      yield* follow(user, task);
    },
    async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
      const task = toA2ATask(await read(userOf(context), params.id), service.baseUrl);
      return params.historyLength === 0 ? { ...task, history: [] } : task;
    },
    async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
      const user = userOf(context);
      const task = await read(user, params.id);
      if (task.status === 'done' || task.status === 'cancelled') throw new TaskNotCancelableError(`Task ${task.id} is ${task.status}.`);
      await run(user, updateTask, { id: params.id, status: 'cancelled' });
      return toA2ATask(await read(user, params.id), service.baseUrl);
    },
    async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse> {
      const user = userOf(context);
      const task = await read(user, params.id);
      yield { payload: { $case: 'task', value: toA2ATask(task, service.baseUrl) } };
      if (!isTerminal(toA2ATask(task, service.baseUrl).status?.state ?? 0)) yield* follow(user, task);
    },
    listTasks: async (): Promise<ListTasksResponse> => {
      throw new UnsupportedOperationError('ListTasks is not served over A2A: list tasks with GET /api/v1/tasks.');
    },
    createTaskPushNotificationConfig: unsupportedPush,
    getTaskPushNotificationConfig: unsupportedPush,
    listTaskPushNotificationConfigs: unsupportedPush,
    deleteTaskPushNotificationConfig: unsupportedPush,
  };
}

/** A retried SendMessage (same messageId) creates its task once: the messageId is the write's idempotency key. */
function keyOf(message: Message): string | undefined {
  return message.messageId === '' ? undefined : `a2a:${message.messageId}`.slice(0, 255);
}

function userOf(context: ServerCallContext): BatonUser {
  const user = context.user;
  if (!(user instanceof BatonUser)) throw new Error('A2A request without an authenticated Baton caller');
  return user;
}

async function unsupportedPush(): Promise<never> {
  throw new PushNotificationNotSupportedError('Baton sends no A2A push notifications: stream the task (SendStreamingMessage, SubscribeToTask) or use Baton webhooks.');
}

/**
 * A Baton problem as an A2A error: a missing task is TaskNotFound, a bad request RequestMalformed,
 * anything else an A2A error whose ErrorInfo metadata carries the problem's code, hint and retryable.
 */
function refusal(body: Record<string, unknown>): A2AError {
  const problem = body as { code: string; title: string; detail: string; hint?: string; retryable?: boolean; status?: number };
  const { code } = problem;
  const message = `${problem.title}: ${problem.detail} (${code})`;
  const metadata = { code, hint: problem.hint ?? '', retryable: String(problem.retryable ?? false), status: String(problem.status ?? '') };
  if (code === 'not_found' || code === 'task_deleted') return new TaskNotFoundError({ message, metadata });
  if (code === 'validation_failed' || code === 'invalid_parameter') return new RequestMalformedError({ message, metadata });
  if (code === 'invalid_transition') return new TaskNotCancelableError({ message, metadata });
  return new A2AError({ message, metadata });
}
