import { fileURLToPath } from 'node:url';
import { build } from 'vite';

/** Builds the web app once per run, so the browser tests drive exactly what `npm start` would serve. */
export default async function setup() {
  await build({ configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)), logLevel: 'warn' });
}
