import { expect } from 'vitest';
import type { TaskStatus } from '../../src/domain/task-status.ts';
import type { Response, TestServer } from '../harness.ts';

/** A problem document as the REST adapter serves it (RFC 9457 plus Baton's members). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  hint: string;
  retryable: boolean;
  docs_url: string;
  [extra: string]: unknown;
}

/**
 * Asserts a response is the given problem: status, `application/problem+json`, and every member
 * DESIGN.md §6 requires (type, title, status, code, detail, hint, retryable, docs_url). Returns it.
 */
export function expectProblem(res: Response, status: number, code: string): Problem {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = res.json<Problem>();
  expect(problem.status).toBe(status);
  expect(problem.code).toBe(code);
  for (const member of ['type', 'title', 'detail', 'hint', 'docs_url'] as const) {
    expect(typeof problem[member], member).toBe('string');
    expect(problem[member].length, member).toBeGreaterThan(0);
  }
  expect(problem.type).toMatch(new RegExp(`^https?://[^ ]+/errors/${code}$`));
  expect(problem.docs_url).toMatch(/^https?:\/\//);
  expect(typeof problem.retryable).toBe('boolean');
  return problem;
}

export interface TaskBody {
  id: string;
  title: string;
  status: TaskStatus;
  version: number;
  [field: string]: unknown;
}

/** Creates a task over HTTP as the given caller (the admin unless a token is given). */
export async function createTask(t: TestServer, body: Record<string, unknown> = {}, token?: string): Promise<TaskBody> {
  const res = await t.request('POST', '/api/v1/tasks', { body: { title: 'a task', ...body }, ...(token ? { token } : {}) });
  expect(res.status, res.body).toBe(201);
  return res.json<TaskBody>();
}

/** Test setup, not behaviour under test: puts a task straight into a status (and version) by SQL. */
export async function setTaskState(t: TestServer, id: string, status: TaskStatus, version?: number): Promise<void> {
  await t.database.db
    .updateTable('tasks')
    .set({ status, ...(version === undefined ? {} : { version }) })
    .where('id', '=', id)
    .execute();
}

export async function taskRow(t: TestServer, id: string) {
  return t.database.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Every event about a subject, in commit order. */
export async function eventsOf(t: TestServer, subject: string) {
  return t.database.db.selectFrom('events').selectAll().where('subject', '=', subject).orderBy('seq', 'asc').execute();
}

/** Rows in `tasks` and `events`, to prove a request wrote nothing. */
export async function countRows(t: TestServer): Promise<{ tasks: number; events: number; keys: number }> {
  const count = async (table: 'tasks' | 'events' | 'idempotency_keys') => {
    const row = await t.database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return { tasks: await count('tasks'), events: await count('events'), keys: await count('idempotency_keys') };
}

/** The caller's principal and token ids, read over HTTP. */
export async function whoami(t: TestServer, token?: string): Promise<{ principal: { id: string; kind: string }; token: { id: string; machine: string } }> {
  const res = await t.request('GET', '/api/v1/whoami', token ? { token } : {});
  expect(res.status, res.body).toBe(200);
  return res.json();
}
