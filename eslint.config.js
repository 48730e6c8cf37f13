// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // docs/examples/openapi-client imports a client generated at test time (test/openapi/generated-client.test.ts compiles it).
  { ignores: ['node_modules/**', 'scratch/**', 'web/dist/**', 'dist/**', 'packages/client/dist/**', '.baton/**', 'coverage/**', 'docs/examples/openapi-client/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Fastify handlers and registry runs are async by contract even when one needs no await.
      '@typescript-eslint/require-await': 'off',
      'no-restricted-imports': 'off',
    },
  },
  // Layering, top to bottom (README, Architecture): main.ts, server.ts and cli/ compose; adapters/
  // and workers/ serve; service/ runs operations in transactions; operations/ is the registry;
  // store/ holds the queries; domain/ and the leaf modules in src/*.ts are pure. Each layer
  // imports only below itself (workers may use the service's event tail), type imports included.
  ...layer(['src/adapters/**'], ['store', 'workers', 'cli', 'entry'], 'Adapters never touch the database nor run workers: go through src/service.'),
  ...layer(['src/cli/**'], ['store'], 'The command line goes through the server or the service, never the store.'),
  ...layer(['src/workers/**'], ['adapters', 'cli', 'entry'], 'Workers sit beside the adapters: import service/, operations/, store/ and below.'),
  ...layer(['src/service/**'], ['workers', 'adapters', 'cli', 'entry'], 'service/ imports only operations/, store/, domain/ and leaf modules.'),
  ...layer(['src/operations/**'], ['service', 'workers', 'adapters', 'cli', 'entry', 'registry'], 'operations/ imports only store/, domain/ and leaf modules; the operation list comes through ctx.operations.', ['src/operations/authorization-table.ts']),
  // The authorization table is keyed by the registry's operation names (a type); the registry never imports it.
  ...layer(['src/operations/authorization-table.ts'], ['service', 'workers', 'adapters', 'cli', 'entry'], 'The authorization table imports the registry\'s names, domain/ and leaf modules only.'),
  ...layer(['src/store/**'], ['operations', 'service', 'workers', 'adapters', 'cli', 'entry'], 'store/ holds queries only: it imports domain/ and leaf modules.'),
  ...layer(['src/*.ts'], ['store', 'operations', 'service', 'workers', 'adapters', 'cli', 'entry'], 'Leaf modules in src/*.ts import only each other and domain/.', ['src/main.ts', 'src/server.ts']),
  // The client is the package baton-tasks-client as well: it runs in browsers and typechecks
  // without the server, so it imports only its own folder (its types come from the generated operations.ts).
  {
    files: ['src/client/**'],
    ignores: ['src/client/**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', '!./*'], message: 'The client imports only src/client/ (scripts/generate-client.ts generates its types from the registry).' }] },
      ],
    },
  },
  // The web app speaks the API as any client does: of the server's code it imports only the client (src/client/).
  {
    files: ['web/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../../', '../../../', '../../../../'].flatMap((up) => [`${up}src/*.ts`, ...['store', 'operations', 'service', 'workers', 'adapters', 'cli', 'domain'].map((name) => `${up}src/${name}/**`)]),
              message: 'The web app reaches the server only through the client (src/client/): its routes and types are generated from the registry.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/domain/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['../*', '!./*'], message: 'domain/ is pure: it imports only from domain/.' }] },
      ],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);

/**
 * Import patterns of each layer, as written from a file in a folder below src/ (`fromRoot`: from
 * src/*.ts itself). `entry` is the composition root, src/main.ts and src/server.ts (adapters/mcp
 * has a server.ts of its own); `registry` is operations/index.ts.
 */
function importsOf(name, fromRoot) {
  const ups = fromRoot ? ['./'] : ['../', '../../', '../../../'];
  switch (name) {
    case 'entry':
      return ups.flatMap((up) => [`${up}main.ts`, `${up}server.ts`]);
    case 'registry':
      return ['**/operations/index.ts', '../index.ts', './index.ts'];
    default:
      return [`**/${name}/*`, `**/${name}/**`, `./${name}/*`, `./${name}/**`];
  }
}

/** A lint block refusing, in `files`, imports of the `forbidden` layers. */
function layer(files, forbidden, message, ignores = []) {
  const fromRoot = files.every((f) => f.startsWith('src/*'));
  return [
    {
      files,
      ignores,
      rules: {
        '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: forbidden.flatMap((name) => importsOf(name, fromRoot)), message }] }],
      },
    },
  ];
}
