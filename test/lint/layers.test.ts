/**
 * The layering is enforced by `npm run lint` (eslint.config.js): an import that crosses a layer
 * the wrong way fails, one that goes down passes. Linted as text at real file paths with the
 * project's own configuration, without type information: the layering rule reads only import
 * specifiers, and building the type-aware program for the first file took 20 to 40 s on a busy
 * two-core machine (past the 30 s test timeout), so the test's outcome depended on the machine's
 * speed. `npm run lint` still runs the rule with everything else, type-aware.
 */
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({
  cwd: REPO,
  overrideConfig: tseslint.configs.disableTypeChecked,
  ruleFilter: ({ ruleId }) => ruleId === '@typescript-eslint/no-restricted-imports',
});

async function importErrors(filePath: string, specifier: string): Promise<string[]> {
  const code = `import * as imported from '${specifier}';\nexport const used = imported;\n`;
  const [result] = await eslint.lintText(code, { filePath: `${REPO}${filePath}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('layers import only downward', () => {
  it.each([
    ['src/operations/tasks/create-task.ts', '../../service/service.ts'],
    ['src/operations/meta/whoami.ts', '../index.ts'],
    ['src/operations/define-operation.ts', '../service/execute.ts'],
    ['src/store/tasks.ts', '../operations/index.ts'],
    ['src/store/tasks.ts', '../service/execute.ts'],
    ['src/service/execute.ts', '../adapters/rest/app.ts'],
    ['src/service/execute.ts', '../workers/prune.ts'],
    ['src/adapters/rest/app.ts', '../../store/tasks.ts'],
    ['src/adapters/rest/app.ts', '../../workers/maintenance.ts'],
    ['src/adapters/rest/app.ts', '../../server.ts'],
    ['src/workers/prune.ts', '../adapters/rest/app.ts'],
    ['src/cli/baton.ts', '../store/database.ts'],
    ['src/domain/scopes.ts', '../errors.ts'],
    ['src/errors.ts', './service/service.ts'],
    ['src/client/index.ts', '../errors.ts'],
    ['src/client/problem.ts', '../operations/index.ts'],
    ['web/src/types.ts', '../../src/operations/index.ts'],
    ['web/src/views/board.tsx', '../../../src/errors.ts'],
  ])('%s may not import %s', async (file, specifier) => {
    const errors = await importErrors(file, specifier);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^@typescript-eslint\/no-restricted-imports: /);
  });

  it.each([
    ['src/operations/tasks/create-task.ts', '../../store/tasks.ts'],
    ['src/service/execute.ts', '../operations/index.ts'],
    ['src/workers/deliver-webhooks.ts', '../service/event-tail.ts'],
    ['src/adapters/rest/app.ts', '../../service/service.ts'],
    ['src/adapters/mcp/http.ts', './server.ts'],
    ['src/store/tasks.ts', '../domain/task-status.ts'],
    ['src/cli/baton.ts', '../server.ts'],
    ['src/cli/context.ts', '../client/index.ts'],
    ['src/client/index.ts', './operations.ts'],
    ['web/src/types.ts', '../../src/client/index.ts'],
  ])('%s may import %s', async (file, specifier) => {
    expect(await importErrors(file, specifier)).toEqual([]);
  });
});
