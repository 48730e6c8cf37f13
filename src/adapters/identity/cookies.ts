import fastifyCookie from '@fastify/cookie';
import fastifyCsrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Service } from '../../service/service.ts';

/** The session cookie's name over plain http: its value is the session secret (spec/identity.md, "Sessions"). */
const SESSION = 'baton_session';
/** The CSRF secret of the double-submit check (@fastify/csrf-protection). */
const CSRF = 'baton_csrf';
/**
 * The `__Host-` prefix: the browser keeps such a cookie only if it is Secure, `Path=/` and has no
 * Domain, so a sibling subdomain can neither set nor shadow it.
 */
const HOST_PREFIX = '__Host-';
/**
 * Until then (the server's clock), behind https, a cookie still under its name from before the
 * prefix is read and moved to its `__Host-` name (spec/identity.md, "Sessions").
 */
const OLD_NAMES_UNTIL = Date.parse('2027-03-01T00:00:00Z');
/** The header a cookie-authenticated write carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Cookies are marked Secure when the server is reached over HTTPS (BATON_PUBLIC_URL says https, as behind a TLS proxy). */
export function cookieBase(service: Service) {
  return { httpOnly: true, sameSite: 'lax' as const, secure: service.baseUrl.startsWith('https:'), path: '/' };
}

/** The session cookie's name: `__Host-baton_session` behind https, `baton_session` over plain http (`__Host-` needs Secure). */
export function sessionCookie(service: Service): string {
  return cookieBase(service).secure ? `${HOST_PREFIX}${SESSION}` : SESSION;
}

/** The session secret a request carries, unless it carries a bearer token (which then wins). */
export function sessionSecret(request: FastifyRequest): string | undefined {
  if (request.headers.authorization !== undefined) return undefined;
  // Behind https the old name has been moved to the new one (or dropped) by `registerCookies`.
  return request.cookies[`${HOST_PREFIX}${SESSION}`] ?? request.cookies[SESSION];
}

/**
 * Cookie parsing, and CSRF protection for every write that would be authenticated by the session
 * cookie: a request with that cookie, no Authorization header and an unsafe method needs the
 * `x-csrf-token` header (a token bound to the session, from GET /auth/session), or it is refused
 * with 403 `csrf_failed` before any route runs. Bearer-token requests are not affected.
 */
export async function registerCookies(app: FastifyInstance, service: Service): Promise<void> {
  await app.register(fastifyCookie, { secret: service.cookieKey.toString('hex') });
  const secure = cookieBase(service).secure;
  await app.register(fastifyCsrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: secure ? `${HOST_PREFIX}${CSRF}` : CSRF,
    cookieOpts: { ...cookieBase(service), signed: true },
    csrfOpts: { hmacKey: service.cookieKey, userInfo: true },
    getUserInfo: (request) => sessionSecret(request) ?? '',
    getToken: (request) => header(request.headers[CSRF_HEADER]),
  });
  if (secure) {
    app.addHook('onRequest', (request, reply, done) => {
      moveOldNames(request, reply, service);
      done();
    });
  }
  app.addHook('onRequest', (request, reply, done) => {
    if (SAFE_METHODS.has(request.method) || sessionSecret(request) === undefined) {
      done();
      return;
    }
    app.csrfProtection(request, reply, done);
  });
}

/**
 * Behind https, a session or CSRF cookie under its old name (set before the `__Host-` prefix) is
 * read as if it had its new name, which the answer sets (keeping its value) while clearing the old
 * one; a new-named cookie wins over an old one. After `OLD_NAMES_UNTIL` old names are cleared and
 * not read.
 */
function moveOldNames(request: FastifyRequest, reply: FastifyReply, service: Service): void {
  const readOld = service.clock.now().getTime() < OLD_NAMES_UNTIL;
  for (const [name, maxAge] of [[SESSION, service.config.session.absoluteS], [CSRF, undefined]] as const) {
    const old = request.cookies[name];
    if (old === undefined) continue;
    const renamed = `${HOST_PREFIX}${name}`;
    delete request.cookies[name];
    reply.clearCookie(name, cookieBase(service));
    if (!readOld || request.cookies[renamed] !== undefined) continue;
    request.cookies[renamed] = old;
    reply.setCookie(renamed, old, { ...cookieBase(service), ...(maxAge === undefined ? {} : { maxAge }) });
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
