import type { Dialect } from '../../errors.ts';
import type { Operation } from '../../operations/define-operation.ts';
import { API_PREFIX } from './routes.ts';

/** Hints over REST name routes: `[[leases_list holder=me]]` is `GET /api/v1/leases?holder=me`; path parameters fill the path. */
export function restDialect(operations: readonly Operation[]): Dialect {
  return {
    call(name, args) {
      const operation = operations.find((op) => op.name === name);
      if (!operation) return `\`${name}\``;
      const query = { ...args };
      const path = operation.http.path.replace(/\{(\w+)\}/g, (parameter, key: string) => {
        const value = query[key];
        delete query[key];
        return value ?? parameter;
      });
      const search = new URLSearchParams(query).toString();
      return `${operation.http.method} ${API_PREFIX}${path}${search ? `?${search}` : ''}`;
    },
    idempotencyKey: 'Idempotency-Key',
    expectedVersion: 'If-Match',
    schema: 'the OpenAPI document (GET /api/v1/openapi.json)',
    fieldLocations: true,
  };
}

/** What a REST problem is rendered from: the base of its links and the operations its hints name. */
export interface ProblemSource {
  readonly baseUrl: string;
  readonly operations: readonly Operation[];
}
