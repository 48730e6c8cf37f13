import { z } from 'zod';
import { ULID } from '../../ids.ts';
import type { NextAction } from './task-schema.ts';

/**
 * `next_actions` in v2: the operation to call, not the request spelled out. Its route (method and
 * path) is the operation's, in the manifest; over MCP it is the tool of that name. About half the
 * bytes of v1's entry (spec/api.md, "Versions").
 */
export const nextActionV2 = z.object({
  operation: z.string().describe('The operation (the MCP tool); its route is in the manifest.'),
  id: z.string().optional().describe("The path's `{id}`; absent: the carrying task's (a lease's, for `leases_*`)."),
  key: z.string().optional().describe('Send as Idempotency-Key (MCP: idempotency_key); fresh, reuse only to retry.'),
  expected_version: z.int().optional().describe('Send as If-Match (MCP: expected_version).'),
  args: z.record(z.string(), z.unknown()).optional().describe("The other arguments: a write's body, a read's query."),
  fill: z.array(z.string()).max(2).optional().describe("Arguments to add: a hand-in's `summary`, a change request's `comment`."),
});
export type NextActionV2 = z.infer<typeof nextActionV2>;

/** Where a v2 answer is read from. */
export interface V2Reader {
  /** The caller: a lease it holds does not name it. */
  readonly principalId: string;
  /** The request asked for `view=full` or `fields`: its tasks keep every member it selected. */
  readonly selected: boolean;
}

/**
 * A v1 answer in v2's shape. Every `next_actions` entry becomes a v2 entry. Every task in it (an
 * object with `legal_transitions`), unless the request selected its members, leaves out what says
 * nothing: a `normal` priority, an empty `waiting_on`, the holder of a lease the caller holds, an
 * artifact's digest and link (`view=full` and `artifacts_get` have them; its file name stays) and its content type when it
 * is the default for text. A link (`href`) points into v2. Everything else is v1's, member for
 * member, so a stored answer replays alike on either version.
 */
export function toV2Answer(answer: unknown, reader: V2Reader): unknown {
  if (Array.isArray(answer)) return answer.map((item) => toV2Answer(item, reader));
  if (!isObject(answer)) return answer;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(answer)) {
    if (key === 'next_actions' && Array.isArray(value)) {
      const carried = carriedIds(answer);
      out[key] = value.map((action: NextAction) => toV2Action(action, carried));
    }
    else if (key === 'href' && typeof value === 'string') out[key] = value.replace(/^\/api\/v1\//, '/api/v2/');
    else out[key] = toV2Answer(value, reader);
  }
  if (Array.isArray(answer['legal_transitions']) && !reader.selected) leaveOutSilence(out, reader);
  return out;
}

function leaveOutSilence(task: Record<string, unknown>, reader: V2Reader): void {
  if (task['priority'] === 'normal') delete task['priority'];
  if (Array.isArray(task['waiting_on']) && task['waiting_on'].length === 0) delete task['waiting_on'];
  const lease = task['lease'];
  if (isObject(lease) && isObject(lease['holder']) && lease['holder']['id'] === reader.principalId) {
    const { holder: _yours, ...rest } = lease;
    task['lease'] = rest;
  }
  if (Array.isArray(task['artifacts'])) {
    task['artifacts'] = task['artifacts'].map((ref: Record<string, unknown>) => ({
      id: ref['id'],
      ...(ref['name'] === undefined ? {} : { name: ref['name'] }),
      size: ref['size'],
      ...(ref['content_type'] === DEFAULT_TEXT_TYPE ? {} : { content_type: ref['content_type'] }),
    }));
  }
}

/** The content type text uploaded without one gets (artifacts_create): a default view leaves it out. */
const DEFAULT_TEXT_TYPE = 'text/plain; charset=utf-8';

/** The ids a next action on this object leaves out: a task's and its lease's, or a lease's and its task's. */
function carriedIds(carrier: Record<string, unknown>): readonly unknown[] {
  const lease = carrier['lease'];
  return [carrier['id'], carrier['task_id'], isObject(lease) ? lease['id'] : undefined].filter((id) => typeof id === 'string');
}

/** An id in a path: the `{id}` a next action's route takes. */
const PATH_ID = new RegExp(`^[a-z]{3}_${ULID}$`);

function toV2Action(action: NextAction, carried: readonly unknown[]): NextActionV2 {
  const url = new URL(action.href, 'http://baton');
  const id = url.pathname.split('/').find((segment) => PATH_ID.test(segment));
  const key = action.headers?.['Idempotency-Key'];
  const ifMatch = action.headers?.['If-Match'];
  const args = action.method === 'GET' ? (url.search ? Object.fromEntries(url.searchParams) : undefined) : action.body;
  return {
    operation: action.operation,
    ...(id !== undefined && !carried.includes(id) ? { id } : {}),
    ...(key === undefined ? {} : { key }),
    ...(ifMatch === undefined ? {} : { expected_version: Number(ifMatch.replaceAll('"', '')) }),
    ...(args ? { args } : {}),
    ...(action.fill ? { fill: action.fill } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
