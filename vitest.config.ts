import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * `npm test` runs every interface test on PGlite, and again on PostgreSQL when
 * BATON_TEST_DATABASE_URL is set (CI sets it; an unreachable server fails the run, never skips it).
 * Pure unit tests (src/**\/*.test.ts) need no database and run once.
 *
 * Suites whose subject is above the database engine run once: lint; the OpenAPI document, the
 * responses checked against it and the client generated from it; context sizes, names and strict
 * schemas; the authorization tables (the access matrix's interfaces too: test/security/access-matrix.test.ts)
 * and the parity of REST, MCP, GraphQL and A2A; input validation, limits and the fuzzer (refused before
 * any query); the command line (a client of the HTTP API). Adapters never touch the database (lint
 * holds it), so on a second engine these would repeat the same answers byte for byte. Where
 * PostgreSQL is configured they run on it, which answers a test file about three times faster than
 * PGlite (WebAssembly, in the test's own thread); without it, on PGlite. Suites about storage,
 * transactions, concurrency, time, events and recovery run on both (README, "Tests").
 */
const ABOVE_THE_ENGINE = [
  'test/lint/**',
  'test/openapi/**',
  'test/agent/budgets.test.ts',
  'test/agent/errors.test.ts',
  'test/agent/interface-dialects.test.ts',
  'test/agent/names.test.ts',
  'test/agent/portable-names.test.ts',
  'test/mcp/conformance.test.ts',
  'test/mcp/limits.test.ts',
  'test/mcp/parity.test.ts',
  'test/mcp/stdio.test.ts',
  'test/mcp/strict-schemas.test.ts',
  'test/mcp/tools.test.ts',
  'test/graphql/graphql.test.ts',
  'test/graphql/parity.test.ts',
  'test/a2a/**',
  'test/security/authorization-matrix.test.ts',
  'test/security/cross-workspace.test.ts',
  'test/hostile/cursors.test.ts',
  'test/hostile/fuzz.test.ts',
  'test/hostile/limits.test.ts',
  'test/hostile/problem-everywhere.test.ts',
  'test/rest/validation.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/client.test.ts',
  'test/cli/usage.test.ts',
  'test/cli/guard.test.ts',
  'test/cli/ensure-chromium.test.ts',
];

const postgres = Boolean(process.env.BATON_TEST_DATABASE_URL);
const projects: TestProjectInlineConfiguration[] = [
  { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
  {
    extends: true,
    test: {
      name: 'pglite',
      include: ['test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, 'test/web/**', ...(postgres ? ABOVE_THE_ENGINE : [])],
      globalSetup: ['test/setup-pglite.ts'],
      env: { BATON_TEST_ENGINE: 'pglite' },
    },
  },
  // The web app in a real browser, after a fresh `vite build`: once, on PostgreSQL where it is
  // configured, else on PGlite (the engines are covered by the projects above).
  {
    extends: true,
    test: {
      name: 'browser',
      include: ['test/web/**/*.test.ts'],
      globalSetup: [postgres ? 'test/setup-postgres.ts' : 'test/setup-pglite.ts', 'test/web/setup-build.ts'],
      env: { BATON_TEST_ENGINE: postgres ? 'postgres' : 'pglite' },
    },
  },
];
/**
 * Suites that hold a transaction open on purpose (a lock wait, a deadlock, events held back, a
 * migration beside a serving release). Transaction ids are server-wide, so on the shared test
 * PostgreSQL such a transaction holds back every other test database's event cursors too
 * (spec/index.md); these run last, by themselves (`sequence.groupOrder`).
 */
const HOLDS_TRANSACTIONS = [
  'test/ops/metrics.test.ts',
  'test/ops/load-shedding.test.ts',
  'test/ops/rolling-upgrade.test.ts',
  'test/realtime/webhooks.test.ts',
  'test/store/write-conflicts.test.ts',
  'test/store/migrations.test.ts',
  'test/store/driver-failures.test.ts',
  'test/leases/lock-wait-time.test.ts',
];

if (postgres) {
  const onPostgres = { globalSetup: ['test/setup-postgres.ts'], env: { BATON_TEST_ENGINE: 'postgres' } };
  projects.push(
    {
      extends: true,
      test: {
        name: 'postgres',
        include: ['test/**/*.test.ts'],
        // The packed packages serve on PGlite, as a fresh install does; one run of them is enough.
        exclude: [...configDefaults.exclude, 'test/web/**', 'test/package/**', ...HOLDS_TRANSACTIONS],
        ...onPostgres,
      },
    },
    { extends: true, test: { name: 'postgres-last', include: HOLDS_TRANSACTIONS, sequence: { groupOrder: 1 }, ...onPostgres } },
  );
}

export default defineConfig({
  // graphql 16 ships CJS (main) and ESM (module): Node loads the CJS one for every package, so
  // Vite must too, or the schema built here and the GraphQL Yoga executing it see two `graphql`s.
  resolve: { alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('node_modules/graphql/index.js', import.meta.url)) }] },
  test: {
    projects,
    reporters: ['default', './test/summary-reporter.ts'],
    // Timeouts catch hangs, not slowness: on a busy two-core machine a file runs several times
    // slower than alone (a 20 s lint test took 40.8 s), and `npm test` must pass there. A test that
    // really hangs is reported a little later; a passing run costs nothing more.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two cores: more workers only add contention (three made a full run 10 % slower on a slow machine).
    maxWorkers: 2,
    // An unhandled rejection's stack names its caller past the query builder's ten frames.
    execArgv: ['--stack-trace-limit=40'],
    // A worker imports Baton once and runs its files one after another (a fifth less wall time in
    // CI: each file imported the whole server graph again). Safe because Baton keeps no module-level
    // state (every file builds its own server), and a module-level cache creeping in would show here.
    isolate: false,
  },
});
