import fastifyCookie from '@fastify/cookie';
import fastifyCsrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Service } from '../../service/service.ts';

/** The session cookie: its value is the session secret (spec/identity.md, "Sessions"). */
export const SESSION_COOKIE = 'baton_session';
/** The CSRF secret of the double-submit check (@fastify/csrf-protection). */
const CSRF_COOKIE = 'baton_csrf';
/** The header a cookie-authenticated write carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Cookies are marked Secure when the server is reached over HTTPS (BATON_PUBLIC_URL says https, as behind a TLS proxy). */
export function cookieBase(service: Service) {
  return { httpOnly: true, sameSite: 'lax' as const, secure: service.baseUrl.startsWith('https:'), path: '/' };
}

/** The session secret a request carries, unless it carries a bearer token (which then wins). */
export function sessionSecret(request: FastifyRequest): string | undefined {
  return request.headers.authorization === undefined ? request.cookies[SESSION_COOKIE] : undefined;
}

/**
 * Cookie parsing, and CSRF protection for every write that would be authenticated by the session
 * cookie: a request with that cookie, no Authorization header and an unsafe method needs the
 * `x-csrf-token` header (a token bound to the session, from GET /auth/session), or it is refused
 * with 403 `csrf_failed` before any route runs. Bearer-token requests are not affected.
 */
export async function registerCookies(app: FastifyInstance, service: Service): Promise<void> {
  await app.register(fastifyCookie, { secret: service.cookieKey.toString('hex') });
  await app.register(fastifyCsrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: CSRF_COOKIE,
    cookieOpts: { ...cookieBase(service), signed: true },
    csrfOpts: { hmacKey: service.cookieKey, userInfo: true },
    getUserInfo: (request) => request.cookies[SESSION_COOKIE] ?? '',
    getToken: (request) => header(request.headers[CSRF_HEADER]),
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (SAFE_METHODS.has(request.method) || sessionSecret(request) === undefined) {
      done();
      return;
    }
    app.csrfProtection(request, reply, done);
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
