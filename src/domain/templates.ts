import { findCycle } from './task-graph.ts';

/** Tasks one template holds: an instantiation creates them all in one transaction. */
export const TEMPLATE_TASKS_MAX = 100;
/** Parameters one template declares. */
export const TEMPLATE_PARAMETERS_MAX = 20;
/** The longest value a string parameter takes. */
export const PARAMETER_VALUE_MAX = 200;
/**
 * `principal`: who plays a part in this instance of the graph (a reviewer, an on-call), given as a
 * principal's id or name and resolved at instantiation (spec/templates.md, "Roles").
 */
export const PARAMETER_TYPES = ['string', 'number', 'enum', 'principal'] as const;

export interface TemplateParameter {
  readonly name: string;
  readonly type: (typeof PARAMETER_TYPES)[number];
  readonly values?: readonly string[] | undefined;
  readonly required: boolean;
  readonly default?: string | number | undefined;
  readonly description?: string | undefined;
}

export interface TemplateTask {
  readonly key: string;
  readonly title: string;
  readonly description: string;
  readonly priority: string;
  readonly labels: readonly string[];
  readonly assignee?: string | undefined;
  readonly parent?: string | undefined;
  readonly blocked_by: readonly string[];
  readonly not_before_s?: number | undefined;
  readonly due_s?: number | undefined;
  readonly approval: boolean;
}

/** A problem in a template or its parameters, at a JSON pointer into the request. */
export interface TemplateIssue {
  readonly pointer: string;
  readonly detail: string;
  /** Set for a cycle: the keys, each waiting on (or the child of) the next. */
  readonly cycle?: readonly string[];
  readonly kind?: 'blocked_by_cycle' | 'parent_cycle' | 'parent_too_deep' | 'blocked_by_too_deep';
}

/** `{{name}}`, spaces allowed inside the braces. Anything else, `{{Name}}` or a lone `{{`, is literal text. */
const PLACEHOLDER = /\{\{\s*([a-z_][a-z0-9_]{0,39})\s*\}\}/g;

/** The parameter names a text refers to. */
export function placeholders(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}

/**
 * Replaces each `{{name}}` with its value, in one pass: a value is never read again, so a value
 * holding `{{other}}` stays as written. No expressions, no code: names and values only.
 */
export function substitute(text: string, values: Readonly<Record<string, string | number>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** The texts of a task that take placeholders, with their pointers below the task. */
function texts(task: TemplateTask): [string, string][] {
  return [['title', task.title], ['description', task.description], ...task.labels.map((l, i): [string, string] => [`labels/${i}`, l]), ...(task.assignee === undefined ? [] : [['assignee', task.assignee] as [string, string]])];
}

/**
 * Everything wrong with a template definition: repeated names or keys, references to unknown tasks
 * or parameters, parameter defaults that do not fit, cycles among `blocked_by` or `parent` (named
 * through task-graph's findCycle), subtask trees deeper than `limits.depth` and blocker chains longer
 * than `limits.chain`. Empty when it may be saved.
 */
export function checkTemplate(parameters: readonly TemplateParameter[], tasks: readonly TemplateTask[], limits: { depth: number; chain: number }): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  const names = new Set<string>();
  parameters.forEach((p, i) => {
    if (names.has(p.name)) issues.push({ pointer: `/parameters/${i}/name`, detail: `parameter ${p.name} is declared twice` });
    names.add(p.name);
    if (p.type === 'enum' && (p.values === undefined || p.values.length === 0)) issues.push({ pointer: `/parameters/${i}/values`, detail: 'an enum parameter lists its values' });
    if (p.type !== 'enum' && p.values !== undefined) issues.push({ pointer: `/parameters/${i}/values`, detail: 'only an enum parameter lists values' });
    if (p.default !== undefined) {
      const problem = valueProblem(p, p.default);
      if (problem) issues.push({ pointer: `/parameters/${i}/default`, detail: `the default ${problem}` });
    }
  });
  const keys = new Map<string, number>();
  tasks.forEach((t, i) => {
    if (keys.has(t.key)) issues.push({ pointer: `/tasks/${i}/key`, detail: `key ${t.key} is used twice` });
    else keys.set(t.key, i);
  });
  tasks.forEach((t, i) => {
    for (const [at, text] of texts(t)) {
      for (const name of placeholders(text)) if (!names.has(name)) issues.push({ pointer: `/tasks/${i}/${at}`, detail: `{{${name}}} names no declared parameter` });
    }
    if (t.parent !== undefined && !keys.has(t.parent)) issues.push({ pointer: `/tasks/${i}/parent`, detail: `no task in the template has key ${t.parent}` });
    if (t.parent === t.key) issues.push({ pointer: `/tasks/${i}/parent`, detail: 'a task cannot be its own parent', kind: 'parent_cycle', cycle: [t.key, t.key] });
    t.blocked_by.forEach((b, j) => {
      if (!keys.has(b)) issues.push({ pointer: `/tasks/${i}/blocked_by/${j}`, detail: `no task in the template has key ${b}` });
      if (b === t.key) issues.push({ pointer: `/tasks/${i}/blocked_by/${j}`, detail: 'a task cannot wait on itself', kind: 'blocked_by_cycle', cycle: [t.key, t.key] });
    });
    if (new Set(t.blocked_by).size !== t.blocked_by.length) issues.push({ pointer: `/tasks/${i}/blocked_by`, detail: 'blockers must not repeat' });
  });
  if (issues.length > 0) return issues;
  return graphIssues(tasks, keys, limits);
}

/** Cycles and depth, once every reference names a task of the template. */
function graphIssues(tasks: readonly TemplateTask[], keys: ReadonlyMap<string, number>, limits: { depth: number; chain: number }): TemplateIssue[] {
  const blockers = new Map(tasks.map((t) => [t.key, t.blocked_by]));
  const parents = new Map(tasks.map((t) => [t.key, t.parent === undefined ? [] : [t.parent]]));
  for (const t of tasks) {
    const i = keys.get(t.key) ?? 0;
    const waits = findCycle(t.key, t.blocked_by, blockers);
    if (waits) return [{ pointer: `/tasks/${i}/blocked_by/${t.blocked_by.indexOf(waits[1] ?? '')}`, detail: `${waits.join(' → ')} would be a cycle, each task waiting on the next`, kind: 'blocked_by_cycle', cycle: waits }];
    const tree = t.parent === undefined ? undefined : findCycle(t.key, [t.parent], parents);
    if (tree) return [{ pointer: `/tasks/${i}/parent`, detail: `${tree.join(' → ')} would be a cycle, each task the child of the next`, kind: 'parent_cycle', cycle: tree }];
  }
  const depth = longest(tasks, parents);
  const chain = longest(tasks, blockers);
  const issues: TemplateIssue[] = [];
  if (depth.length > limits.depth) issues.push({ pointer: `/tasks/${keys.get(depth.key) ?? 0}/parent`, detail: `the subtask tree would be ${depth.length} levels deep; the limit is ${limits.depth}`, kind: 'parent_too_deep' });
  if (chain.length > limits.chain) issues.push({ pointer: `/tasks/${keys.get(chain.key) ?? 0}/blocked_by`, detail: `a chain of blockers would be ${chain.length} tasks long; the limit is ${limits.chain}`, kind: 'blocked_by_too_deep' });
  return issues;
}

/** The longest path along `edges` (acyclic), in tasks, and the task it starts from. */
function longest(tasks: readonly TemplateTask[], edges: ReadonlyMap<string, readonly string[]>): { key: string; length: number } {
  const memo = new Map<string, number>();
  const from = (key: string): number => {
    const known = memo.get(key);
    if (known !== undefined) return known;
    const length = 1 + Math.max(0, ...(edges.get(key) ?? []).map(from));
    memo.set(key, length);
    return length;
  };
  let best = { key: '', length: 0 };
  for (const t of tasks) if (from(t.key) > best.length) best = { key: t.key, length: from(t.key) };
  return best;
}

/** Why a value does not fit a parameter, or undefined when it does. */
function valueProblem(p: TemplateParameter, value: unknown): string | undefined {
  if (p.type === 'number') return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > PARAMETER_VALUE_MAX) return `is limited to ${PARAMETER_VALUE_MAX} characters`;
  if (p.type === 'enum' && !(p.values ?? []).includes(value)) return `must be one of: ${(p.values ?? []).join(', ')}`;
  return undefined;
}

/**
 * The values an instantiation uses: each given value checked against its declaration (a number
 * also taken as its decimal text, as a query string or a CLI sends it), defaults for the rest.
 * Issues point at `/params/<name>`: unknown names, missing required ones, values of the wrong type.
 */
export function resolveParameters(parameters: readonly TemplateParameter[], given: Readonly<Record<string, unknown>>): { values: Record<string, string | number>; issues: TemplateIssue[] } {
  const values: Record<string, string | number> = {};
  const issues: TemplateIssue[] = [];
  const declared = new Set(parameters.map((p) => p.name));
  for (const name of Object.keys(given)) if (!declared.has(name)) issues.push({ pointer: `/params/${name}`, detail: `the template declares no parameter ${name}` });
  for (const p of parameters) {
    let value = given[p.name];
    if (value === undefined) {
      if (p.default !== undefined) values[p.name] = p.default;
      else if (p.required) issues.push({ pointer: `/params/${p.name}`, detail: `required${p.description ? `: ${p.description}` : ''}` });
      else values[p.name] = '';
      continue;
    }
    if (p.type === 'number' && typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim())) value = Number(value);
    const problem = valueProblem(p, value);
    if (problem) issues.push({ pointer: `/params/${p.name}`, detail: problem });
    else values[p.name] = value as string | number;
  }
  return { values, issues };
}

/** A template task with its texts rendered. */
export interface RenderedTask extends TemplateTask {
  readonly index: number;
}

/**
 * The tasks rendered with `values` (and, in `assignee`, the principal ids of `assignees`), parents
 * and blockers before the tasks that name them (the order they are created in). The template is a
 * checked one: references resolve and nothing cycles.
 */
export function renderTasks(tasks: readonly TemplateTask[], values: Readonly<Record<string, string | number>>, assignees: Readonly<Record<string, string>> = {}): RenderedTask[] {
  const forAssignee = { ...values, ...assignees };
  const byKey = new Map(tasks.map((t, index) => [t.key, { t, index }]));
  const placed = new Set<string>();
  const order: RenderedTask[] = [];
  const place = (key: string): void => {
    if (placed.has(key)) return;
    placed.add(key);
    const found = byKey.get(key);
    if (!found) return;
    const { t, index } = found;
    if (t.parent !== undefined) place(t.parent);
    for (const b of t.blocked_by) place(b);
    order.push({
      ...t,
      index,
      title: substitute(t.title, values),
      description: substitute(t.description, values),
      labels: t.labels.map((l) => substitute(l, values)),
      // A principal parameter renders as the principal's id here (its name elsewhere); left empty, the task is unassigned.
      assignee: t.assignee === undefined || substitute(t.assignee, forAssignee) === '' ? undefined : substitute(t.assignee, forAssignee),
    });
  };
  for (const t of tasks) place(t.key);
  return order;
}
