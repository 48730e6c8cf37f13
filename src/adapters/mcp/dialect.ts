import { type Dialect, OPERATION_NAMES } from '../../errors.ts';

/** Hints over MCP name tools and their arguments (tool names are operation names); errors carry no HTTP locations. */
export const MCP_DIALECT: Dialect = {
  ...OPERATION_NAMES,
  idempotencyKey: '`idempotency_key`',
  expectedVersion: '`expected_version`',
  schema: "the tool's inputSchema (tools/list)",
  fieldLocations: false,
  retryAfter: '`retry_after_s`',
};
