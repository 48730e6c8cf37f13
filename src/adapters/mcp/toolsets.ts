import type { PrincipalKind, Scope } from '../../domain/scopes.ts';
import type { Principal } from '../../domain/principal.ts';
import { BatonError } from '../../errors.ts';
import { type Operation, TOOLSETS, type Toolset } from '../../operations/define-operation.ts';

/** The scopes of working on tasks and of reviewing that work, whose undeclared operations land in `tasks`. */
const TASK_SCOPES: readonly (Scope | null)[] = [null, 'tasks:read', 'tasks:write', 'tasks:claim', 'tasks:review', 'events:read', 'artifacts:write', 'approvals:decide'];

/**
 * An operation's tool set: the one it declares, else `tasks` for an operation of the task scopes
 * that runs without a human's approval and deletes nothing, else `admin`. `work` is never inferred,
 * so a new operation reaches every agent's default listing only by a decision written in its file.
 */
export function toolsetOf(operation: Operation): Toolset {
  if (operation.toolset !== undefined) return operation.toolset;
  const taskWork = TASK_SCOPES.includes(operation.scope) && operation.approval === 'none' && operation.http.method !== 'DELETE';
  return taskWork ? 'tasks' : 'admin';
}

/** The sets listed when `?toolsets=` is absent. */
export const DEFAULT_TOOLSETS: Readonly<Record<PrincipalKind, readonly Toolset[]>> = { agent: ['work'], human: ['work', 'tasks'] };

/** Names a host may give besides the sets: `all`, and `agent`, the name before 0.3 of what `work` and `tasks` hold now. */
const ALIASES: Readonly<Record<string, readonly Toolset[]>> = { all: TOOLSETS, agent: ['work', 'tasks'] };

/**
 * The tool sets a caller lists: those named in `?toolsets=` (comma-separated, aliases expanded),
 * else its kind's default. Unknown names are a 400.
 */
export function selectToolsets(query: string | undefined, principal: Principal): ReadonlySet<Toolset> {
  if (query === undefined || query.trim() === '') return new Set(DEFAULT_TOOLSETS[principal.kind]);
  const names = query.split(',').map((name) => name.trim());
  const known = [...TOOLSETS, ...Object.keys(ALIASES)];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new BatonError('invalid_parameter', `Unknown tool set ${unknown.join(', ')}.`, {
      hint: `Name tool sets from ${known.join(', ')}, comma-separated: /mcp?toolsets=work,tasks.`,
      extra: { errors: [{ pointer: '/toolsets', detail: `one of ${known.join(', ')}`, location: 'query' }] },
    });
  }
  return new Set(names.flatMap((name) => ALIASES[name] ?? [name as Toolset]));
}
