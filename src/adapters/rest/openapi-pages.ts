import type { JsonSchema } from '../json-schema.ts';

type Document = { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, JsonSchema> } };

/** What every list answer carries beside its `data` (`pageSchema`, src/operations/shared/lists.ts). */
const PAGE_MEMBERS = ['has_more', 'next_cursor', 'sync_cursor'];
const PAGE_REF = '#/components/schemas/Page';

/** A list answer's schema as emitted: `data` and the page members, all required, closed. */
function isPage(schema: JsonSchema): boolean {
  const properties = Object.keys((schema['properties'] as JsonSchema | undefined) ?? {});
  return (
    Object.keys(schema).join() === 'type,properties,required,additionalProperties' &&
    schema['additionalProperties'] === false &&
    properties.join() === ['data', ...PAGE_MEMBERS].join() &&
    (schema['required'] as string[]).join() === properties.join()
  );
}

/**
 * States the members every list answer has beside its `data` once, as `#/components/schemas/Page`:
 * each page is `Page` with its own `data`, closed by `unevaluatedProperties` (which sees `Page`'s
 * members; `additionalProperties` would not). A generated client's type for a page is the same
 * (openapi-typescript: `{ data: Task[] } & Page`). Pages whose members differ are left as they are.
 * Changes the document in place.
 */
export function sharePages(document: Document): void {
  const schemas = document.components.schemas;
  let page: JsonSchema | undefined;
  const shared = (schema: JsonSchema): JsonSchema => {
    if (!isPage(schema)) return schema;
    const { data, ...members } = schema['properties'] as Record<string, JsonSchema>;
    page ??= { type: 'object', description: 'What every list answer carries besides its own `data`.', properties: members, required: PAGE_MEMBERS };
    if (JSON.stringify(members) !== JSON.stringify(page['properties'])) return schema;
    return { type: 'object', allOf: [{ $ref: PAGE_REF }], properties: { data }, required: ['data'], unevaluatedProperties: false };
  };
  for (const [name, schema] of Object.entries(schemas)) schemas[name] = shared(schema);
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item) as { responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }> }[]) {
      for (const answer of Object.values(op.responses)) {
        const media = answer.content?.['application/json'];
        if (media?.schema) media.schema = shared(media.schema);
      }
    }
  }
  if (page) schemas['Page'] = page;
}
