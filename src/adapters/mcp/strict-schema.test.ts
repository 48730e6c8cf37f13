import { expect, it } from 'vitest';
import { fromStrict, strictSchema } from './strict-schema.ts';

const params = { type: 'object', propertyNames: { maxLength: 40 }, additionalProperties: { anyOf: [{ type: 'string' }, { type: 'number' }] } };
const input = { type: 'object', properties: { id: { type: 'string' }, params }, required: ['id'], additionalProperties: false };

it('lists a map with free keys as {key, value} pairs, and reads the pairs back as the map', () => {
  const strict = strictSchema(input);
  expect((strict['properties'] as Record<string, unknown>)['params']).toEqual({
    anyOf: [
      {
        type: 'array',
        description: 'A list of {key, value} pairs.',
        items: { type: 'object', properties: { key: { type: 'string' }, value: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, required: ['key', 'value'], additionalProperties: false },
      },
      { type: 'null' },
    ],
  });
  expect(fromStrict({ id: 'tpl_1', params: [{ key: 'service', value: 'billing' }, { key: 'shards', value: 3 }] }, input)).toEqual({ id: 'tpl_1', params: { service: 'billing', shards: 3 } });
  expect(fromStrict({ id: 'tpl_1', params: null }, input)).toEqual({ id: 'tpl_1' });
});
