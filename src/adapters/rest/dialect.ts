import type { Dialect } from '../../errors.ts';
import type { Operation } from '../../operations/define-operation.ts';
import { type ApiVersion, apiPrefix } from '../../domain/api-version.ts';

/** Hints over REST name routes: `[[leases_list holder=me]]` is `GET /api/v1/leases?holder=me` (in v2, `/api/v2/…`); path parameters fill the path. */
export function restDialect(operations: readonly Operation[], version: ApiVersion = 1): Dialect {
  const prefix = apiPrefix(version);
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
      return `${operation.http.method} ${prefix}${path}${search ? `?${search}` : ''}`;
    },
    idempotencyKey: 'Idempotency-Key',
    expectedVersion: 'If-Match',
    schema: `the OpenAPI document (GET ${prefix}/openapi.json)`,
    fieldLocations: true,
    retryAfter: '`Retry-After`',
  };
}

/** What a REST problem is rendered from: the base of its links and the operations its hints name. */
export interface ProblemSource {
  readonly baseUrl: string;
  readonly operations: readonly Operation[];
}
