/**
 * The client's types and routes (src/client/operations.ts, routes.ts) are generated from the
 * operation registry by scripts/generate-client.ts; this fails while a checked-in file differs from
 * what the registry generates now, so an operation added or changed without regenerating cannot land.
 */
import { expect, expectTypeOf, it } from 'vitest';
import { staleClientModules } from '../../scripts/generate-client.ts';
import type { z } from 'zod';
import type { Operations } from '../../src/client/operations.ts';
import { createClient, type OperationName as ClientOperationName } from '../../src/client/index.ts';
import { type OperationName, operations, type RegisteredOperation } from '../../src/operations/index.ts';

it('src/client/operations.ts and routes.ts are what the registry generates (run `node scripts/generate-client.ts`)', () => {
  // Named, not diffed: a 7000-line diff would bury the one-line instruction.
  expect(staleClientModules(), 'stale: run `node scripts/generate-client.ts` and commit the files').toEqual([]);
  // And at compile time (tsc reads this file): an operation added to the registry fails `npm run typecheck` until regenerated.
  expectTypeOf<ClientOperationName>().toEqualTypeOf<OperationName>();
});

it('has one method for every operation of the registry, on the route the registry binds', () => {
  const client = createClient({ baseUrl: 'http://unused.test', token: 'unused' });
  const routes = new Map<string, string>();
  const walk = (node: object) => {
    for (const value of Object.values(node) as unknown[]) {
      if (typeof value === 'function' && 'operation' in value && 'method' in value && 'path' in value) routes.set(String(value.operation), `${String(value.method)} ${String(value.path)}`);
      else if (typeof value === 'object' && value !== null) walk(value);
    }
  };
  walk(client);
  expect(Object.fromEntries(routes)).toEqual(Object.fromEntries(operations.map((op) => [op.name, `${op.http.method} ${op.http.path}`])));
});

type Registered<N extends OperationName> = Extract<RegisteredOperation, { name: N }>;
/** The operations whose generated output type does not admit what their Zod schema outputs (never, when they agree). */
type OutputsDisagree = { [N in OperationName]: z.output<Registered<N>['output']> extends Operations[N]['output'] ? never : N }[OperationName];
/** The operations whose Zod schema does not accept what their generated input type lets a caller send. */
type InputsDisagree = { [N in OperationName]: Operations[N]['input'] extends z.input<Registered<N>['input']> ? never : N }[OperationName];

it('generates types that agree with the Zod schemas they come from (checked by tsc)', () => {
  // The emitter reads JSON Schema, not Zod: a construct it translated wrongly would name its operation here.
  expectTypeOf<OutputsDisagree>().toEqualTypeOf<never>();
  expectTypeOf<InputsDisagree>().toEqualTypeOf<never>();
});
