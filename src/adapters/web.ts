import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { BatonError } from '../errors.ts';

/** Where `npm run build:web` (Vite) writes the app; overridable for tests of a missing build. */
export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/**
 * The client-side routes of the web app. Each is answered with index.html; nothing else is, so
 * /api, /spec, /errors, /healthz and the other server routes keep their own answers and problems.
 */
const CLIENT_ROUTES = ['/', '/tasks/:id', '/approvals', '/inbox', '/agents', '/agents/:id', '/fleet', '/insight', '/activity', '/dead-letter', '/sessions', '/templates', '/webhooks', '/schedules'];

/**
 * No inline script or style, nothing from another origin: the app talks only to this server.
 * `connect-src 'self'` covers the API and the event stream; tokens travel in a header, never a cookie.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}

/**
 * Serves the human web app at `/`: hashed assets under /assets/ cached for a year (immutable),
 * index.html never cached (read anew each time), every page under a strict Content-Security-Policy. When the build is
 * missing the server still starts; `/` then says how to build it, and the returned message is
 * meant for the start-up log.
 */
export async function registerWeb(app: FastifyInstance, dist: string = WEB_DIST): Promise<string | undefined> {
  const indexFile = `${dist}index.html`;
  if (!existsSync(indexFile)) {
    app.get('/', async (_request, reply) => {
      secure(reply).header('cache-control', 'no-store');
      throw new BatonError('web_app_not_built', `The web app is not built (${indexFile} is missing).`);
    });
    return `web app not built (${indexFile} is missing): run \`npm run build:web\``;
  }
  await app.register(fastifyStatic, {
    root: `${dist}assets`,
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    immutable: true,
    maxAge: '365d',
    setHeaders: (reply) => {
      reply.header('x-content-type-options', 'nosniff');
    },
  });
  // Read on each page load (a few hundred bytes), not once: a rebuild or an upgrade in place
  // replaces the hashed assets, and a kept copy would name ones that are gone (a blank page).
  const index = () =>
    readFile(indexFile, 'utf8').catch(() => {
      throw new BatonError('web_app_not_built', `The web app is being rebuilt or was removed (${indexFile} is missing).`);
    });
  for (const url of CLIENT_ROUTES) {
    app.get(url, async (_request, reply) => secure(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(await index()));
  }
  return undefined;
}
