import { z } from 'zod';
import { PRINCIPAL_KINDS, SCOPES } from '../domain/scopes.ts';
import { TASK_STATUSES } from '../domain/task-status.ts';
import { nextAction } from '../operations/tasks/task-schema.ts';

const text = z.string();
const scopes = z.array(z.enum(SCOPES));
const you = z.object({ id: z.string(), kind: z.enum(PRINCIPAL_KINDS), scopes });
const features = z.object({ search: text, subtasks: text, scheduling: text, attempts: text, dead_letter: text, stream: text });

/** The full capability manifest (`GET /api/v1?view=full`): the builder is typed by it, the OpenAPI document names it `Manifest`. */
export const manifestSchema = z.object({
  name: text,
  description: text,
  version: text,
  release: text.describe('The release that runs.'),
  base_url: text,
  auth: z.object({ mode: z.literal('bearer'), header: text, token_format: text, scopes }),
  rate_limits: z.object({ scope: text, default: z.object({ requests: z.int(), window_s: z.int() }), headers: z.array(text), exceeded: text }),
  attempts: z.object({ default_max_attempts: z.int(), backoff_s: z.array(z.number()), rule: text }),
  leases: z.object({ ttl_s: z.object({ default: z.int(), min: z.int(), max: z.int() }) }),
  approvals: text,
  conventions: z.object({ idempotency: text, concurrency: text, pagination: text, deltas: text, errors: text }),
  features,
  entities: z.array(
    z.object({
      name: text,
      id_prefix: text,
      href: text,
      statuses: z.array(z.enum(TASK_STATUSES)).optional(),
      transitions: z.record(z.string(), z.array(z.enum(TASK_STATUSES))).optional().describe('Status → the statuses it may move to.'),
    }),
  ),
  operations: z.array(
    z.object({
      name: text,
      summary: text,
      kind: z.enum(['read', 'write', 'stream']),
      scope: text.nullable(),
      approval: z.enum(['none', 'destructive', 'outward']),
      method: z.enum(['GET', 'POST', 'PATCH', 'DELETE']),
      path: text,
      interfaces: z.array(text),
      allowed: z.boolean().optional().describe('With a token: whether it may call this now.'),
      needs_approval: z.boolean().optional().describe('With a token: whether a call waits for a human approval.'),
    }),
  ),
  you: you.optional().describe('With a token: who it is.'),
  mcp: z.object({ url: text, transport: text, tools: text, toolsets: text, schemas: text, resources: text, prompts: z.array(text), tasks: text }),
  links: z.object({ openapi: text, whoami: text, docs: text, agent_guide: text, errors: text, compact: text }),
});

/** The compact manifest an agent token gets by default (`?view=compact`); the OpenAPI document names it `ManifestCompact`. */
export const compactManifestSchema = z.object({
  name: text,
  version: text,
  release: text.describe('The release that runs.'),
  base_url: text,
  you,
  next_actions: z.array(nextAction).describe('How to start: a ready claim, when the token may claim.'),
  conventions: z.object({ auth: text, next_actions: text, idempotency: text, concurrency: text, leases: text, errors: text }),
  features,
  operations: z.record(z.string(), text).describe('What this token may call: name → `METHOD path`.'),
  needs_approval: z.array(text),
  task_statuses: z.array(z.enum(TASK_STATUSES)),
  mcp: z.object({ url: text, toolsets: text }),
  links: z.object({ full: text, openapi: text, agent_guide: text, errors: text, compact: text }),
});

/** A manifest as its builder makes it; the route adds `release`. */
export type Manifest = Omit<z.output<typeof manifestSchema>, 'release'>;
export type CompactManifest = Omit<z.output<typeof compactManifestSchema>, 'release'>;
