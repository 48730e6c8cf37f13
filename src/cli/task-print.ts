import type { BatonClient, Task, TaskEvent } from '../client/index.ts';
import type { Context } from './context.ts';
import { nameOf, principalNames } from './names.ts';
import { statusText } from './output.ts';

/** Tasks as `baton tasks list` and `ready` print them: one row each, the lease's holder by name. */
export function printTaskTable(ctx: Context, tasks: readonly Task[], names: ReadonlyMap<string, string>): void {
  const c = ctx.out.colors;
  ctx.out.table(
    ['ID', 'STATUS', 'PRIORITY', 'TITLE', 'LABELS', 'HOLDER'],
    tasks.map((t) => [t.id, statusText(c, t.status ?? ''), t.priority ?? '', t.title ?? '', (t.labels ?? []).join(','), nameOf(names, t.lease?.holder.id)]),
  );
}

/**
 * A task as `show` and every change print it. The principals on it go by name as well as id (when
 * the token may read principals): an id alone does not tell a lead whether it is the agent they meant.
 */
export async function printTask(ctx: Context, client: BatonClient, task: Task, headline?: string): Promise<void> {
  if (ctx.out.json) return ctx.out.data(task);
  if (headline) ctx.out.note(headline);
  const names = await principalNames(client, [task.lease?.holder.id, task.assignee?.id, task.handoff?.by.id].filter((id) => id !== undefined));
  const who = (id: string) => (names.has(id) ? `${nameOf(names, id)} (${id})` : id);
  const c = ctx.out.colors;
  const rows: [string, string][] = [
    ['id', task.id],
    ['title', task.title ?? ''],
    ['status', statusText(c, task.status ?? '')],
    ['priority', task.priority ?? ''],
    ['labels', (task.labels ?? []).join(', ')],
    ['version', String(task.version ?? '')],
    ['lease', task.lease ? `${task.lease.id} held by ${who(task.lease.holder.id)}, epoch ${task.lease.epoch}, expires ${task.lease.expires_at}` : ''],
    ['waiting on', (task.waiting_on ?? []).join(', ')],
    ['attempts', task.attempts ? `${task.attempts} failed (limit ${task.max_attempts ?? "the server's default, BATON_MAX_ATTEMPTS"})` : ''],
    ['not before', task.not_before ?? ''],
    ['blocked', task.blocked_reason ?? ''],
    ['assignee', task.assignee ? who(task.assignee.id) : ''],
    ['due', task.due_at ? `${task.due_at}${task.overdue ? ' (overdue)' : ''}` : ''],
    ['parent', task.parent_id ?? ''],
    ['handed in', task.handoff ? `${task.handoff.at} by ${who(task.handoff.by.id)}` : ''],
    ['summary', task.handoff?.summary ?? ''],
    // Each by its file name where it has one, and its id (`baton artifacts download <id>`).
    ['artifacts', (task.artifacts ?? []).map((a) => `${a.name ? `${a.name} (${a.id})` : a.id}, ${a.content_type}, ${a.size} bytes`).join('; ')],
    ['next', (task.legal_transitions ?? []).join(', ')],
  ];
  if (task.description) rows.push(['description', task.description]);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [key, value] of rows) if (value) ctx.out.line(`${c.dim(key.padEnd(width))}  ${value}`);
}

/** An event as a task's timeline and `watch` print it. */
export function eventRow(event: TaskEvent, names: ReadonlyMap<string, string>): string[] {
  const name = event.actor ? names.get(event.actor.id) : undefined;
  return [event.created_at ?? '', event.type ?? '', name ?? (event.actor ? `${event.actor.kind}:${event.actor.id}` : ''), `${event.subject ?? ''} ${JSON.stringify(event.data ?? {})}`];
}
