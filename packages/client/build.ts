/**
 * Builds `baton-tasks-client` (npm pack runs it as prepack): regenerates src/client/operations.ts
 * and routes.ts from the operation registry (scripts/generate-client.ts: every operation's route, and its input
 * and output types from the same Zod schemas the server validates with, through JSON Schema), then
 * compiles the checkout's client, src/client/, to ESM with .d.ts in dist/ under the strictest
 * options a consumer may use, without Node's types (the client runs in browsers too).
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { writeClientModules } from '../../scripts/generate-client.ts';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const SOURCE = here('../../src/client/');
const DIST = here('./dist/');

// The client is released with the server it was generated from, under the same version.
const versionOf = (path: string) => (JSON.parse(readFileSync(here(path), 'utf8')) as { version: string }).version;
if (versionOf('./package.json') !== versionOf('../../package.json')) throw new Error('packages/client/package.json must carry the version of the root package.json');

writeClientModules();
rmSync(DIST, { recursive: true, force: true });
// The client's modules, without the tests beside them.
const modules = readdirSync(SOURCE).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts', 'lib.dom.asynciterable.d.ts'],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: [],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  verbatimModuleSyntax: true,
  allowImportingTsExtensions: true,
  rewriteRelativeImportExtensions: true,
  declaration: true,
  rootDir: SOURCE,
  outDir: DIST,
};
const program = ts.createProgram(modules.map((name) => `${SOURCE}${name}`), options);
const emitted = program.emit();
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (diagnostics.length > 0) {
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => SOURCE, getNewLine: () => '\n' };
  process.stderr.write(ts.formatDiagnostics(diagnostics, host));
  process.exitCode = 1;
} else {
  // Declarations name their neighbours as a consumer's resolver finds them (.js), so a project
  // without allowImportingTsExtensions reads them (TypeScript rewrites only the JavaScript's).
  for (const file of readdirSync(DIST).filter((name) => name.endsWith('.d.ts'))) {
    writeFileSync(`${DIST}${file}`, readFileSync(`${DIST}${file}`, 'utf8').replace(/(from '\.\/[\w-]+)\.ts'/g, "$1.js'"));
  }
}
