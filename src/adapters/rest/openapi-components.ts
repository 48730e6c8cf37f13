import { z } from 'zod';
import { errorCode, problemSchema } from '../../errors.ts';
import { agentOutput, tokenOutput } from '../../operations/agents/agent-schema.ts';
import { approvalOutput } from '../../operations/approvals/approval-schema.ts';
import { artifactRef } from '../../operations/artifacts/artifact-schema.ts';
import { artifactOutput } from '../../operations/artifacts/get-artifact.ts';
import { commentOutput } from '../../operations/comments/comment-schema.ts';
import { discussionOutput } from '../../operations/comments/discussion.ts';
import { eventOutput } from '../../operations/events/event-schema.ts';
import { endedLeaseView, endedOutput } from '../../operations/leases/cycle-lease.ts';
import { claimOutput, claimView } from '../../operations/leases/grant.ts';
import { leaseOutput } from '../../operations/leases/lease-schema.ts';
import { workspaceSettings } from '../../operations/workspaces/workspace-schema.ts';
import {
  actorRef,
  claimedTaskView,
  compactTaskOutput,
  compactTaskView,
  fullTask,
  fullTaskOutput,
  handoff,
  holderRef,
  nextAction,
  statusCounts,
  taskLeaseSummary,
  taskRequirement,
  taskOutput,
} from '../../operations/tasks/task-schema.ts';
import { askOutput } from '../../operations/asks/ask-schema.ts';
import { runOutput } from '../../operations/runs/run-schema.ts';
import { budgetOutput } from '../../operations/budgets/budget-schema.ts';
import { insightDuration, statFigures } from '../../operations/insight/insight-figures.ts';
import { scheduleOutput } from '../../operations/schedules/schedule-schema.ts';
import { templateOutput } from '../../operations/templates/template-schema.ts';
import { reservationOutput } from '../../operations/reservations/reservation-schema.ts';
import { sessionOutput } from '../../operations/sessions/session-schema.ts';
import { directoryEntry } from '../../operations/directory/list-directory.ts';
import { nextCursorOutput, syncCursorOutput } from '../../operations/shared/lists.ts';
import { preferencesOutput } from '../../operations/notifications/notification-schema.ts';
import { attemptsOutput, deliveryOutput, webhookOutput, webhookWithSecret } from '../../operations/webhooks/webhook-schema.ts';
import { compactManifestSchema, manifestSchema } from '../manifest-schema.ts';
import type { JsonSchema } from '../json-schema.ts';

interface Component {
  readonly name: string;
  /** The schema object the operations' schemas hold (found by identity): where it appears, the document refers to the component. */
  readonly matches: z.ZodType;
  /** What the component says, when narrower than `matches`: a task in a fixed view, every member it carries required. */
  readonly exact?: z.ZodType;
}

/**
 * The named schemas of the OpenAPI document (`#/components/schemas/<name>`), each emitted once.
 * A task has one component per view: a view always carries its members, so they are required there.
 */
const COMPONENTS: readonly Component[] = [
  { name: 'Problem', matches: problemSchema },
  { name: 'ErrorCode', matches: errorCode },
  { name: 'Task', matches: fullTaskOutput, exact: fullTask },
  { name: 'TaskCompact', matches: compactTaskOutput, exact: compactTaskView },
  { name: 'ClaimedTask', matches: claimedTaskView },
  { name: 'TaskFields', matches: taskOutput },
  { name: 'TaskLease', matches: taskLeaseSummary },
  { name: 'TaskReservation', matches: taskRequirement },
  { name: 'StatusCounts', matches: statusCounts },
  { name: 'NextAction', matches: nextAction },
  { name: 'Handoff', matches: handoff },
  { name: 'ActorRef', matches: actorRef },
  { name: 'PrincipalRef', matches: holderRef },
  { name: 'ArtifactRef', matches: artifactRef },
  { name: 'Artifact', matches: artifactOutput },
  { name: 'Discussion', matches: discussionOutput },
  { name: 'Lease', matches: leaseOutput },
  { name: 'Claim', matches: claimOutput, exact: claimView },
  { name: 'EndedLease', matches: endedOutput, exact: endedLeaseView },
  { name: 'Comment', matches: commentOutput },
  { name: 'Event', matches: eventOutput },
  { name: 'Approval', matches: approvalOutput },
  { name: 'Webhook', matches: webhookOutput },
  { name: 'WebhookWithSecret', matches: webhookWithSecret },
  { name: 'Delivery', matches: deliveryOutput },
  { name: 'Attempts', matches: attemptsOutput },
  { name: 'NextCursor', matches: nextCursorOutput },
  { name: 'SyncCursor', matches: syncCursorOutput },
  { name: 'NotificationPreferences', matches: preferencesOutput },
  { name: 'Agent', matches: agentOutput },
  { name: 'Token', matches: tokenOutput },
  { name: 'Run', matches: runOutput },
  { name: 'Budget', matches: budgetOutput },
  { name: 'InsightFigures', matches: statFigures },
  { name: 'InsightDuration', matches: insightDuration },
  { name: 'Schedule', matches: scheduleOutput },
  { name: 'Template', matches: templateOutput },
  { name: 'Reservation', matches: reservationOutput },
  { name: 'Ask', matches: askOutput },
  { name: 'Session', matches: sessionOutput },
  { name: 'DirectoryEntry', matches: directoryEntry },
  { name: 'WorkspaceSettings', matches: workspaceSettings },
  { name: 'Manifest', matches: manifestSchema },
  { name: 'ManifestCompact', matches: compactManifestSchema },
];

const componentRef = (name: string) => `#/components/schemas/${name}`;
/** Where an exact view is emitted before it takes its component's name (never a component name: those are PascalCase). */
const exactId = (name: string) => `exact:${name}`;

/**
 * What an answer's schema need not repeat: a server time's 400-character pattern (its `format`
 * says it), and an integer's bounds when they are JavaScript's safe range (every integer Baton sends is in it).
 */
function terse(node: JsonSchema): void {
  if (node['format'] === 'date-time') delete node['pattern'];
  if (node['type'] === 'integer' && node['maximum'] === Number.MAX_SAFE_INTEGER) delete node['maximum'];
  if (node['type'] === 'integer' && node['minimum'] === Number.MIN_SAFE_INTEGER) delete node['minimum'];
}

/**
 * A view that has the same members as another component and only requires more of them, stated as
 * that component with those members required (`Task` is `TaskFields` with every member required):
 * the same type for a generated client (openapi-typescript: `WithRequired<TaskFields, …>`), the members written once.
 */
function asNarrowing(view: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const { required, ...members } = view as { required?: string[] };
  const shape = JSON.stringify(members);
  for (const [name, other] of Object.entries(components)) {
    const { required: otherRequired = [], ...otherMembers } = other as { required?: string[] };
    if (other === view || JSON.stringify(otherMembers) !== shape || !otherRequired.every((r) => required?.includes(r))) continue;
    return { type: 'object', allOf: [{ $ref: componentRef(name) }], required };
  }
  return view;
}

/**
 * Output schemas with the named ones as `$ref`s: one pass of Zod's registry conversion
 * (`z.toJSONSchema(registry)`) over the components and the given schemas, so every reference
 * points at a component. Answers the components and each given schema by its key.
 */
export function outputSchemas(schemas: ReadonlyMap<string, z.ZodType>): { components: Record<string, JsonSchema>; schemas: Map<string, JsonSchema> } {
  const registry = z.registry<{ id: string }>();
  const named = new Map<z.ZodType, string>();
  for (const c of COMPONENTS) {
    registry.add(c.matches, { id: c.name });
    named.set(c.matches, c.name);
    if (c.exact && !named.has(c.exact)) registry.add(c.exact, { id: exactId(c.name) });
  }
  // A schema that is a component is referred to; any other is emitted once under its key.
  const keys = new Map<z.ZodType, string>();
  for (const [key, schema] of schemas) {
    if (!named.has(schema) && !keys.has(schema)) {
      keys.set(schema, key);
      registry.add(schema, { id: key });
    }
  }
  const emitted = z.toJSONSchema(registry, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12', uri: componentRef, override: ({ jsonSchema }) => terse(jsonSchema) }).schemas;
  if ('__shared' in emitted) throw new Error('a schema outside the components was extracted (a cycle?): name it');
  const body = (id: string): JsonSchema => {
    const { $id: _id, $schema: _schema, ...rest } = emitted[id] as JsonSchema;
    return rest;
  };
  const components = Object.fromEntries(COMPONENTS.map((c) => [c.name, body(c.exact ? exactId(c.name) : c.name)]));
  for (const c of COMPONENTS) if (c.exact) components[c.name] = asNarrowing(components[c.name] ?? {}, components);
  // An operation's output that another's embeds (an item inside a list's page) is referred to by its key: emit it too.
  const referred = JSON.stringify(emitted);
  for (const key of keys.values()) if (referred.includes(`"$ref":"${componentRef(key)}"`)) components[key] = body(key);
  const result = new Map<string, JsonSchema>();
  for (const [key, schema] of schemas) {
    const name = named.get(schema);
    result.set(key, name ? { $ref: componentRef(name) } : body(keys.get(schema) ?? key));
  }
  return { components, schemas: result };
}
