import type { JsonSchema } from '../json-schema.ts';

type Node = Record<string, unknown>;
type Document = { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, JsonSchema> } };

/** JSON Schema 2020-12 keywords whose value is a schema, a map of schemas or a list of schemas. */
const ONE = ['items', 'additionalProperties', 'propertyNames', 'not', 'contains', 'if', 'then', 'else', 'unevaluatedProperties', 'unevaluatedItems'];
const MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];
const LIST = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];

/** What a `$ref` costs in place of a schema (`{"$ref":"#/components/schemas/<name>"}` with a short name). */
const REF_BYTES = 45;
/**
 * A schema is shared only when it is this large, sharing it saves this much, and it says something
 * of its own (a description, an enum, a pattern, members): a small one reads better where it is, and
 * a bare shape (a nullable time, any object) would take the name of one of its many uses.
 */
const MIN_BYTES = 60;
const MIN_SAVING = 60;
const MEANING = /"(description|enum|pattern|properties|const)":/;

/** Names better than the derived ones, by derived name (the member a schema fills, `Item` for a list's items). */
const NAMES: Record<string, string> = {
  StatusItem: 'TaskStatus',
  Status: 'TaskStatus',
  Reservations: 'TaskReservations',
  Artifacts: 'TaskArtifacts',
  State: 'LeaseState',
  Prefix: 'TokenPrefix',
  Usage: 'RunUsage',
  Features: 'ManifestFeatures',
  TtlS: 'LeaseTtl',
  ReservationsItem: 'ReservationRequest',
  EventTypes: 'EventTypeFilter',
  Fields: 'EventFields',
  EventsListOutput: 'EventPage',
  DataItem: 'InboxItem',
  Template: 'ScheduledTemplate',
  Reason: 'FailureCode',
  TasksClaimNextLabels: 'LabelFilter',
  LabelsItem: 'Label',
  ManifestScopesItem: 'Scope',
  ScopesItem: 'Scope',
  WorkspacesListInboxItem: 'Workspace',
  Counts: 'InboxCounts',
  LeasesReleaseOutput: 'ReleasedLease',
  Limit: 'BudgetLimit',
  Cost: 'CostByCurrency',
  Outcome: 'RunOutcome',
  Statuses: 'TaskStatuses',
};

/** A schema where it sits: the object holding it and its key there, the name its place suggests, and the slot of the schema it is in (-1: none). */
interface Slot {
  holder: Node | unknown[];
  key: string | number;
  hint: string;
  parent: number;
  /** The component or operation it is in. */
  owner: string;
}

/** Every place a schema sits in the document: components, parameters, bodies, answers, and the schemas inside them. */
function slots(document: Document): Slot[] {
  const found: Slot[] = [];
  let owner = '';
  const visit = (holder: Node | unknown[], key: string | number, hint: string, parent = -1) => {
    const node = (holder as Record<string | number, unknown>)[key];
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
    const at = found.push({ holder, key, hint, parent, owner }) - 1;
    const schema = node as Node;
    for (const k of ONE) if (k in schema) visit(schema, k, k === 'items' ? `${hint}Item` : hint, at);
    for (const k of MAP) for (const name of Object.keys((schema[k] as Node | undefined) ?? {})) visit(schema[k] as Node, name, pascal(name), at);
    for (const k of LIST) ((schema[k] as unknown[] | undefined) ?? []).forEach((_, i) => visit(schema[k] as unknown[], i, hint, at));
  };
  const content = (response: Node | undefined, hint: string) => {
    for (const media of Object.values((response?.['content'] as Record<string, Node> | undefined) ?? {})) {
      visit(media, 'schema', hint);
      visit(media, 'x-item-schema', hint);
    }
  };
  for (const name of Object.keys(document.components.schemas)) {
    owner = name;
    visit(document.components.schemas, name, name);
  }
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item) as Node[]) {
      const id = pascal(String(op['operationId']));
      owner = id;
      for (const parameter of (op['parameters'] as Node[] | undefined) ?? []) visit(parameter, 'schema', pascal(String(parameter['name'])));
      content(op['requestBody'] as Node | undefined, `${id}Input`);
      for (const response of Object.values((op['responses'] as Record<string, Node> | undefined) ?? {})) content(response, `${id}Output`);
    }
  }
  return found;
}

function pascal(name: string): string {
  return name.replace(/(^|[_\-. ])(\w)/g, (_, __: string, c: string) => c.toUpperCase());
}

const componentRef = (name: string) => `#/components/schemas/${name}`;

/**
 * Names the schemas the document repeats: an inline schema equal to a component becomes a `$ref` to
 * it, and one that appears alike in several places (a filter several operations take, an item two
 * answers carry) becomes a component of its own, named after the member it fills (`Scopes`,
 * `MaxAttempts`; `NAMES` has the better names: `TaskStatus`, `EventTypeFilter`). The largest are
 * shared first, then what still repeats inside the rest. Every place keeps the same schema: a
 * generated client sees the same types. A served name is part of v1 (a generated client's type
 * name): test/openapi/document.test.ts lists them. Changes the document in place.
 */
export function shareSchemas(document: Document): void {
  const schemas = document.components.schemas;
  for (;;) {
    const all = slots(document);
    const text = serializer();
    const texts = all.map((slot) => text((slot.holder as Record<string | number, unknown>)[slot.key]));
    // A component's body: a place holding the same schema refers to it.
    const named = new Map(Object.entries(schemas).map(([name, body]) => [text(body), name]));
    const uses = new Map<string, { count: number; hints: Map<string, number>; owner: string }>();
    all.forEach((slot, i) => {
      const key = texts[i] ?? '';
      if (slot.holder === schemas || key.startsWith('{"$ref"') || key.length < MIN_BYTES) return;
      const use = uses.get(key) ?? { count: 0, hints: new Map<string, number>(), owner: slot.owner };
      use.count += 1;
      use.hints.set(slot.hint, (use.hints.get(slot.hint) ?? 0) + 1);
      uses.set(key, use);
    });
    const worth = (key: string, count: number) =>
      (count - 1) * Buffer.byteLength(key) - count * REF_BYTES >= MIN_SAVING && MEANING.test(key) && !hasDefaultedMember(JSON.parse(key) as Node);
    // Outermost first: what repeats inside a schema just shared is counted again on the next pass.
    const gone = new Set<number>();
    const refused = new Set<string>();
    all.forEach((slot, i) => {
      if (gone.has(slot.parent)) return void gone.add(i);
      const key = texts[i] ?? '';
      const use = uses.get(key);
      if (slot.holder === schemas || use === undefined) return;
      let name = named.get(key);
      if (name === undefined && use.count > 1 && !refused.has(key)) {
        if (worth(key, use.count)) {
          name = nameFor(use, schemas);
          schemas[name] = JSON.parse(key) as JsonSchema;
          named.set(key, name);
        } else {
          refused.add(key);
        }
      }
      if (name === undefined) return;
      (slot.holder as Record<string | number, unknown>)[slot.key] = { $ref: componentRef(name) };
      gone.add(i);
    });
    if (gone.size === 0) return;
  }
}

/** `JSON.stringify` for the document's plain JSON, each object's text built once from its members' (a pass reads every schema and all inside it). */
function serializer(): (value: unknown) => string {
  const memo = new Map<object, string>();
  const text = (value: unknown): string => {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value);
    let known = memo.get(value);
    if (known === undefined) {
      known = Array.isArray(value) ? `[${value.map(text).join(',')}]` : `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(',')}}`;
      memo.set(value, known);
    }
    return known;
  };
  return text;
}

/**
 * Whether an object schema in it has a member with a `default`. Such a schema stays where it is: in a
 * request body a generated client types that member optional, in a component required
 * (openapi-typescript's `defaultNonNullable`), so naming it would change the request's type.
 */
function hasDefaultedMember(schema: Node): boolean {
  const members = Object.values((schema['properties'] as Record<string, Node> | undefined) ?? {});
  if (members.some((member) => 'default' in member)) return true;
  const inner = [...members, ...ONE.map((k) => schema[k]), ...LIST.flatMap((k) => (schema[k] as unknown[] | undefined) ?? [])];
  return inner.some((node) => typeof node === 'object' && node !== null && !Array.isArray(node) && hasDefaultedMember(node as Node));
}

/**
 * The name a shared schema's places suggest (the most common), made unique among the components by
 * the component or operation it was first found in (`ManifestScopes` when `Scopes` is taken).
 */
function nameFor(use: { hints: Map<string, number>; owner: string }, schemas: Record<string, unknown>): string {
  const [hint = 'Shared'] = [...use.hints].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).map(([h]) => h);
  const base = NAMES[hint] ?? hint;
  const qualified = `${use.owner.replace(/(Input|Output)$/, '')}${base}`;
  let name = base in schemas ? (NAMES[qualified] ?? qualified) : base;
  for (let n = 2; name in schemas; n += 1) name = `${base}${n}`;
  return name;
}
