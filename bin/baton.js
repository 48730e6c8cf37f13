#!/usr/bin/env node
// The `baton` command. Plain JavaScript that any Node parses, so an older Node gets one line saying
// which Node Baton needs instead of a stack trace: nothing of Baton is imported before the check.
// NODE_MAJOR is the floor of "engines" in package.json (test/package/server.test.ts holds them equal).
import { existsSync } from 'node:fs';

const NODE_MAJOR = 22;
if (Number(process.versions.node.split('.')[0]) < NODE_MAJOR) {
  process.stderr.write(`baton needs Node.js ${NODE_MAJOR} or newer; this is Node.js ${process.versions.node} (${process.execPath}).\n`);
  process.exit(1);
}
// A checkout runs its TypeScript as it is; the package (which ships no src/) its compiled dist/.
const source = new URL('../src/cli/baton.ts', import.meta.url);
await import(existsSync(source) ? source.href : new URL('../dist/cli/baton.js', import.meta.url).href);
