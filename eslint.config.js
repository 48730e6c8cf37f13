// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'scratch/**', 'web/dist/**', '.baton/**', 'coverage/**'] },
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
  {
    // Layering (STYLE.md): adapters and cli never reach the store; the domain imports nothing of ours.
    files: ['src/adapters/**', 'src/cli/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/store/*', '**/store/**'], message: 'Adapters never touch the database: go through src/service.' }] },
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
