import { defineConfig } from 'vite';

/**
 * The human web app: Preact through Oxc's automatic JSX runtime (no plugin needed), built to
 * web/dist with hashed file names under assets/. This config lives in web/ so that Vitest,
 * which reads the root vitest.config.ts, never picks it up.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  logLevel: 'warn',
  // Production JSX even when built under Vitest (NODE_ENV=test), so the browser tests and the
  // JavaScript budget (test/web/budget.test.ts) see what `npm start` serves, not ~10 KB of source locations.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact', development: false } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // The polyfill would be inline script, which the Content-Security-Policy forbids.
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
