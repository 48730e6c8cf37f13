import type { JsonSchema, JsonSchemas } from '../json-schema.ts';
import { asV2Schema } from '../v2-schema.ts';

/** The v1 document's shape, as far as v2 changes it. */
interface Document {
  readonly info: { version: string; description: string };
  readonly components: { schemas: Record<string, JsonSchema> };
}

/**
 * v2's document: v1's, routes under `/api/v2`, with the schemas v2 answers change (../v2-schema.ts):
 * `NextAction` is v2's entry, and what a task's default view leaves out is no longer required.
 * Everything else, the components' names included, is v1's: a client generated from either reads
 * the other's tasks but for these members.
 */
export function asV2Document<D extends Document>(v1: D, schemas: JsonSchemas): D {
  const doc = JSON.parse(JSON.stringify(v1).replaceAll('/api/v1', '/api/v2')) as D;
  doc.info.version = 'v2';
  doc.info.description += ' v2: leaner default views.';
  doc.components.schemas = asV2Schema(doc.components.schemas, schemas);
  const artifactRef = doc.components.schemas['ArtifactRef']?.['properties'] as Record<string, JsonSchema> | undefined;
  if (!artifactRef?.['content_type']) throw new Error('v2 describes ArtifactRef.content_type, which v1 no longer has: update src/adapters/rest/openapi-v2.ts');
  artifactRef['content_type'] = { ...artifactRef['content_type'], description: 'Absent in a default view: text/plain; charset=utf-8.' };
  return doc;
}
