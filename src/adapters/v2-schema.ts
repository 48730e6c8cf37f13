import { nextActionV2 } from '../operations/tasks/v2-answer.ts';
import type { JsonSchema, JsonSchemas } from './json-schema.ts';

/** What a v2 task's default view leaves out when it says nothing (operations/tasks/v2-answer.ts). */
const SILENT_TASK_MEMBERS = ['priority', 'waiting_on'];

/** The members of the schemas v2 changes, by which they are recognised wherever they appear. */
const NEXT_ACTION_V1 = ['operation', 'method', 'href', 'headers', 'body', 'fill'];
const ARTIFACT_REF = ['id', 'name', 'size', 'content_type', 'sha256', 'href'];
const TASK_LEASE = ['id', 'holder', 'epoch', 'expires_at'];

/**
 * A v1 answer's JSON Schema as v2 answers it (the OpenAPI document's components, an MCP tool's
 * output schema): a `next_actions` entry is v2's, and the members a task's default view leaves out
 * are no longer required (a task's `priority` and `waiting_on`, its lease's `holder`, an artifact
 * reference's `content_type`, `sha256` and `href`). A schema is recognised by its members, so one
 * rule serves a document of named components and a tool's schema with everything inline.
 */
export function asV2Schema<T>(schema: T, schemas: JsonSchemas): T {
  return rewrite(schema, schemas.output(nextActionV2)) as T;
}

function rewrite(node: unknown, nextAction: JsonSchema): unknown {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, nextAction));
  if (typeof node !== 'object' || node === null) return node;
  const schema = node as JsonSchema;
  const members = Object.keys((schema['properties'] as object | undefined) ?? {});
  if (sameMembers(members, NEXT_ACTION_V1)) return structuredClone(nextAction);
  const out: JsonSchema = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, rewrite(value, nextAction)]));
  const required = out['required'];
  if (!Array.isArray(required)) return out;
  const optional = sameMembers(members, ARTIFACT_REF)
    ? ['content_type', 'sha256', 'href']
    : sameMembers(members, TASK_LEASE)
      ? ['holder']
      : required.includes('legal_transitions')
        ? SILENT_TASK_MEMBERS
        : [];
  if (optional.length > 0) out['required'] = required.filter((member: string) => !optional.includes(member));
  return out;
}

function sameMembers(members: readonly string[], expected: readonly string[]): boolean {
  return members.length === expected.length && expected.every((member) => members.includes(member));
}
