import { type Artifact, type Message, type Part, Role, type Task, TaskState } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { TaskStatus } from '../../domain/task-status.ts';

/** The Baton task members the mapping reads (tasks_get with `fields` = {@link A2A_TASK_FIELDS}). */
export interface BatonTask {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly status: TaskStatus;
  readonly blocked_reason: string | null;
  readonly updated_at: string;
  readonly handoff: { readonly summary: string; readonly at: string } | null;
  readonly artifacts: readonly { readonly id: string; readonly content_type: string; readonly size: number; readonly href: string }[];
}

export const A2A_TASK_FIELDS = 'id,title,description,status,blocked_reason,updated_at,handoff,artifacts';

/** The `artifactId` of the hand-in summary, listed beside the task's own artifacts. */
const HANDOFF_ARTIFACT = 'handoff';

/**
 * Baton's status as an A2A TaskState. Baton's reviewer is a Baton principal, not the A2A client, so
 * `in_review` stays `working` (no input is required of the client); a dead-lettered task
 * (`blocked_reason: attempts_exhausted`) has `failed`.
 */
function taskStateOf(task: Pick<BatonTask, 'status' | 'blocked_reason'>): TaskState {
  if (task.blocked_reason === 'attempts_exhausted') return TaskState.TASK_STATE_FAILED;
  switch (task.status) {
    case 'todo':
      return TaskState.TASK_STATE_SUBMITTED;
    case 'in_progress':
    case 'in_review':
    case 'blocked':
      return TaskState.TASK_STATE_WORKING;
    case 'done':
      return TaskState.TASK_STATE_COMPLETED;
    case 'cancelled':
      return TaskState.TASK_STATE_CANCELED;
  }
}

export function isTerminal(state: TaskState): boolean {
  return state === TaskState.TASK_STATE_COMPLETED || state === TaskState.TASK_STATE_CANCELED || state === TaskState.TASK_STATE_FAILED;
}

/** A Baton task as an A2A Task: the contextId is the task id (Baton has no conversations). */
export function toA2ATask(task: BatonTask, baseUrl: string): Task {
  const state = taskStateOf(task);
  return {
    id: task.id,
    contextId: task.id,
    status: { state, timestamp: task.updated_at, message: state === TaskState.TASK_STATE_COMPLETED && task.handoff ? agentMessage(task.id, `${task.id}:done`, task.handoff.summary) : undefined },
    artifacts: artifactsOf(task, baseUrl),
    history: [{ ...agentMessage(task.id, `${task.id}:request`, task.description === '' ? task.title : `${task.title}\n${task.description}`), role: Role.ROLE_USER }],
    metadata: { baton_status: task.status, baton_href: `${baseUrl}/api/v1/tasks/${task.id}` },
  };
}

/** The result: the hand-in summary (text) and every artifact of the task (a URL to its bytes, which take the same token). */
function artifactsOf(task: BatonTask, baseUrl: string): Artifact[] {
  const handoff: Artifact[] = task.handoff ? [artifact(HANDOFF_ARTIFACT, 'Hand-in summary', [part({ $case: 'text', value: task.handoff.summary }, 'text/markdown')])] : [];
  return [...handoff, ...task.artifacts.map((ref) => artifact(ref.id, ref.id, [part({ $case: 'url', value: `${baseUrl}${ref.href}` }, ref.content_type)]))];
}

/** The user's message as a Baton task: the first line is the title, the whole text the description when there is more. */
export function taskInputOf(message: Message, titleMax: number): { title: string; description: string } {
  const text = message.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? dataText(p.content.value) : p.content?.$case === 'url' ? p.content.value : ''))
    .filter((t) => t !== '')
    .join('\n\n')
    .trim();
  const [first = '', ...rest] = text.split('\n');
  const title = first.trim().slice(0, titleMax);
  const description = rest.join('\n').trim();
  return { title, description: first.trim().length > titleMax ? text : description };
}

/** A data part as JSON text; one nested too deeply to write (a stack overflow) is a malformed request, not an internal error. */
function dataText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    throw new RequestMalformedError('A data part is nested too deeply to read; send it flatter, or as text.');
  }
}

function agentMessage(taskId: string, messageId: string, text: string): Message {
  return { messageId, contextId: taskId, taskId, role: Role.ROLE_AGENT, parts: [part({ $case: 'text', value: text }, 'text/plain')], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function artifact(artifactId: string, name: string, parts: Part[]): Artifact {
  return { artifactId, name, description: '', parts, metadata: undefined, extensions: [] };
}

function part(content: NonNullable<Part['content']>, mediaType: string): Part {
  return { content, metadata: undefined, filename: '', mediaType };
}
