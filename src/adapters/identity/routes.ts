import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import * as oidc from 'openid-client';
import type { OidcConfig } from '../../config.ts';
import { BatonError, toBatonError } from '../../errors.ts';
import type { Service } from '../../service/service.ts';
import { PROVIDER_CLOCK_SKEW_S } from '../../service/sessions.ts';
import { sendProblem } from '../rest/problem.ts';
import { cookieBase, CSRF_HEADER, sessionCookie, sessionSecret } from './cookies.ts';
import { signInFailurePage } from './failure-page.ts';
import { verifyLogoutToken } from './logout-token.ts';
import { safeReturnTo } from './return-to.ts';

/** The sign-in in progress: state, nonce and PKCE verifier, in a signed cookie that only the callback reads. */
const LOGIN_COOKIE = 'baton_oidc';
const LOGIN_PATH = '/auth/oidc';
/** How long a person may take at the provider before the callback is refused. */
const LOGIN_TTL_MS = 10 * 60_000;
/** How old a provider's logout token may be when it arrives. */
const LOGOUT_TOKEN_MAX_AGE_S = 5 * 60;

interface LoginState {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  readonly returnTo: string;
  /** When the sign-in started (epoch ms, the server's clock). */
  readonly at: number;
}

/**
 * Single sign-on and the web app's session (spec/identity.md): GET /auth/oidc/login starts the
 * authorization code flow with PKCE, state and nonce; GET /auth/oidc/callback checks the answer
 * with openid-client (state, `iss`, nonce, the ID token's signature and times), opens a session
 * and sets its cookie; GET /auth/session tells the app whether it is signed in (and its CSRF
 * token); POST /auth/logout ends the session on the server.
 */
export function registerIdentityRoutes(app: FastifyInstance, service: Service): void {
  const provider = service.config.oidc;
  const redirectUri = `${service.baseUrl}${LOGIN_PATH}/callback`;
  // Discovered once per app, again after a failure: the provider's metadata, not a cache of anyone's data.
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = async (conf: OidcConfig): Promise<oidc.Configuration> => {
    discovered ??= oidc.discovery(new URL(conf.issuer), conf.clientId, conf.clientSecret, undefined, insecureLoopback(conf.issuer) ? { execute: [oidc.allowInsecureRequests] } : {});
    const found = await discovered.catch((error: unknown) => {
      discovered = undefined;
      throw new BatonError('unavailable', `The OpenID provider ${conf.issuer} could not be discovered: ${messageOf(error)}`, { headers: { 'retry-after': '5' } });
    });
    // The ID token's times are checked against this server's clock (the injectable one), not the process's.
    const skew = Math.round((service.clock.now().getTime() - Date.now()) / 1000);
    const config = new oidc.Configuration(found.serverMetadata(), conf.clientId, { client_secret: conf.clientSecret, [oidc.clockSkew]: skew }, clientAuthentication(found.serverMetadata(), conf.clientSecret));
    if (insecureLoopback(conf.issuer)) oidc.allowInsecureRequests(config);
    return config;
  };
  // A browser that navigated here gets a page a person can read; a script asking for JSON the problem.
  const fail = (reply: FastifyReply, request: FastifyRequest, error: unknown) => {
    const problem = error instanceof BatonError ? error : new BatonError('sign_in_failed', messageOf(error), providerErrorOf(error));
    request.log.warn({ code: problem.code, detail: problem.detail }, 'single sign-on failed');
    if (!(request.headers.accept ?? '').includes('text/html')) return sendProblem(reply, problem, service, request.id);
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    return reply
      .code(problem.status)
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'self'; script-src 'none'; style-src 'unsafe-inline'")
      .type('text/html; charset=utf-8')
      .send(signInFailurePage(problem, provider?.name ?? 'single sign-on'));
  };

  app.get(`${LOGIN_PATH}/login`, async (request, reply) => {
    try {
      if (!provider) throw new BatonError('route_not_found', 'Single sign-on is off on this server (the operator sets BATON_OIDC_ISSUER, BATON_OIDC_CLIENT_ID and BATON_OIDC_CLIENT_SECRET); sign in with a token.');
      const returnTo = safeReturnTo((request.query as { return_to?: unknown }).return_to, service.baseUrl);
      const config = await configuration(provider);
      const login: LoginState = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), returnTo, at: service.clock.now().getTime() };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid profile email',
        state: login.state,
        nonce: login.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(login.verifier),
        code_challenge_method: 'S256',
      });
      reply.setCookie(LOGIN_COOKIE, JSON.stringify(login), { ...cookieBase(service), path: LOGIN_PATH, signed: true, maxAge: LOGIN_TTL_MS / 1000 });
      return reply.redirect(url.href, 302);
    } catch (error) {
      return fail(reply, request, error);
    }
  });

  app.get(`${LOGIN_PATH}/callback`, async (request, reply) => {
    // One use: the cookie goes whatever happens, so a replayed callback finds no sign-in to finish.
    const login = readLogin(request);
    reply.clearCookie(LOGIN_COOKIE, { ...cookieBase(service), path: LOGIN_PATH });
    try {
      if (!provider) throw new BatonError('route_not_found', 'Single sign-on is off on this server.');
      if (!login) throw new BatonError('sign_in_failed', 'No sign-in is in progress in this browser (or it was tampered with); start again.');
      if (service.clock.now().getTime() - login.at > LOGIN_TTL_MS) throw new BatonError('sign_in_failed', 'The sign-in took longer than 10 minutes; start again.');
      const config = await configuration(provider);
      const current = new URL(request.url, service.baseUrl);
      const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: login.verifier, expectedState: login.state, expectedNonce: login.nonce, idTokenExpected: true });
      const idToken = tokens.claims();
      if (!idToken) throw new BatonError('sign_in_failed', 'The provider answered without an ID token.');
      const claims = { ...(await userInfo(config, tokens.access_token, idToken.sub)), ...idToken };
      const email = typeof claims.email === 'string' ? claims.email : null;
      const emailVerified = claims.email_verified === true;
      const name = [claims.name, claims.preferred_username, email, claims.sub].find((v): v is string => typeof v === 'string' && v.trim() !== '') ?? claims.sub;
      const roleClaim = claims[provider.roleClaim];
      const roleValues = Array.isArray(roleClaim) ? roleClaim.filter((v): v is string => typeof v === 'string') : typeof roleClaim === 'string' ? [roleClaim] : [];
      const providerSessionId = typeof idToken.sid === 'string' ? idToken.sid : null;
      const signed = await service.signIn({ issuer: claims.iss, subject: claims.sub, name: name.trim().slice(0, 100), email, emailVerified, roleValues, providerSessionId }, request.headers['user-agent'] ?? '');
      reply.setCookie(sessionCookie(service), signed.secret, { ...cookieBase(service), maxAge: service.config.session.absoluteS });
      return reply.redirect(login.returnTo, 303);
    } catch (error) {
      return fail(reply, request, error);
    }
  });

  app.get('/auth/session', async (request, reply) => {
    const offer = provider ? { name: provider.name, login_url: `${LOGIN_PATH}/login`, required: provider.required } : null;
    const secret = sessionSecret(request);
    const caller = secret === undefined ? undefined : await service.authenticate(undefined, secret).catch(() => undefined);
    if (secret !== undefined && !caller) reply.clearCookie(sessionCookie(service), cookieBase(service));
    reply.header('cache-control', 'no-store');
    if (!caller || secret === undefined) return { oidc: offer, session: null, csrf_token: null };
    return {
      oidc: offer,
      session: { id: caller.principal.sessionId, principal_id: caller.principal.id },
      csrf_token: reply.generateCsrf({ userInfo: secret }),
      csrf_header: CSRF_HEADER,
    };
  });

  // Another of the person's workspaces: a new session there replaces this one (CSRF-checked like every cookie write).
  app.post('/auth/workspace', async (request, reply) => {
    try {
      const secret = sessionSecret(request);
      if (secret === undefined) throw new BatonError('unauthenticated', 'Switching workspaces is for a signed-in web session; a token belongs to one workspace.');
      const body = request.body as { workspace_id?: unknown } | undefined;
      const workspaceId = typeof body?.workspace_id === 'string' ? body.workspace_id : '';
      if (workspaceId === '') throw new BatonError('validation_failed', 'Say which workspace: `workspace_id`.', { extra: { errors: [{ pointer: '/workspace_id', detail: 'required', location: 'body' }] } });
      const signed = await service.switchWorkspace(secret, workspaceId, request.headers['user-agent'] ?? '');
      reply.setCookie(sessionCookie(service), signed.secret, { ...cookieBase(service), maxAge: service.config.session.absoluteS });
      reply.header('cache-control', 'no-store');
      return { workspace_id: signed.workspaceId, session: { id: signed.sessionId, principal_id: signed.agentId } };
    } catch (error) {
      return sendProblem(reply, toBatonError(error), service, request.id);
    }
  });

  // The provider's signing keys, fetched (and refetched on an unknown key id) by jose, for logout tokens.
  let providerKeys: { readonly url: string; readonly get: JWTVerifyGetKey } | undefined;
  const keysAt = (url: string): JWTVerifyGetKey => {
    if (providerKeys?.url !== url) providerKeys = { url, get: createRemoteJWKSet(new URL(url)) };
    return providerKeys.get;
  };
  // Back-channel logout (spec/identity.md): the provider posts a signed logout token when the person
  // signs out there (or is removed); the sessions it names end at once, in every workspace. A form
  // body, as the protocol sends it, parsed in this route's scope only.
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16_384 }, (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));
    scope.post(`${LOGIN_PATH}/backchannel-logout`, async (request, reply) => {
      try {
        if (!provider) throw new BatonError('route_not_found', 'Single sign-on is off on this server, so there is no provider to sign out at.');
        const token = (request.body as { logout_token?: unknown } | undefined)?.logout_token;
        if (typeof token !== 'string' || token === '') throw new BatonError('invalid_parameter', 'Send the logout token as `logout_token` in an application/x-www-form-urlencoded body.');
        const metadata = (await configuration(provider)).serverMetadata();
        if (!metadata.jwks_uri) throw new BatonError('invalid_parameter', `The provider ${provider.issuer} publishes no signing keys (jwks_uri), so its logout tokens cannot be verified.`);
        const logout = await verifyLogoutToken(token, {
          issuer: metadata.issuer, clientId: provider.clientId, keys: keysAt(metadata.jwks_uri), algorithms: metadata.id_token_signing_alg_values_supported,
          now: service.clock.now(), skewS: PROVIDER_CLOCK_SKEW_S, maxAgeS: LOGOUT_TOKEN_MAX_AGE_S,
        });
        const ended = await service.signOutAtProvider(logout);
        request.log.info({ ended, sid: logout.providerSessionId !== null }, 'signed out at the provider');
        return reply.code(200).header('cache-control', 'no-store').send();
      } catch (error) {
        return sendProblem(reply.header('cache-control', 'no-store'), toBatonError(error), service, request.id);
      }
    });
  });

  // CSRF-checked by the cookie hook like every cookie-authenticated write.
  app.post('/auth/logout', async (request, reply) => {
    const secret = sessionSecret(request);
    if (secret !== undefined) await service.signOut(secret);
    reply.clearCookie(sessionCookie(service), cookieBase(service));
    return reply.code(204).send();
  });
}

function readLogin(request: FastifyRequest): LoginState | undefined {
  const raw = request.cookies[LOGIN_COOKIE];
  if (!raw) return undefined;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return undefined;
  try {
    const value = JSON.parse(unsigned.value) as Partial<LoginState>;
    if (typeof value.state !== 'string' || typeof value.nonce !== 'string' || typeof value.verifier !== 'string' || typeof value.returnTo !== 'string' || typeof value.at !== 'number') return undefined;
    return value as LoginState;
  } catch {
    return undefined;
  }
}

/**
 * How Baton authenticates at the token endpoint: the secret in the body (openid-client's default),
 * unless the provider's metadata lists the methods it takes and that is not one of them but HTTP
 * Basic is (a provider that enforces the registration's default, `client_secret_basic`).
 */
function clientAuthentication(metadata: oidc.ServerMetadata, secret: string): oidc.ClientAuth | undefined {
  const methods = metadata.token_endpoint_auth_methods_supported;
  return methods && !methods.includes('client_secret_post') && methods.includes('client_secret_basic') ? oidc.ClientSecretBasic(secret) : undefined;
}

/** Plain HTTP is allowed only to a provider on this machine (development and tests); anywhere else the issuer must be https. */
function insecureLoopback(issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

/**
 * The person's claims from the provider's userinfo endpoint, when it has one: in the code flow a
 * provider may return what the `profile` and `email` scopes ask for there only (OpenID Core §5.4),
 * so the ID token alone can lack the name, email and groups that provisioning and the role map
 * read. The ID token's own claims win where both have one; the subject must match it.
 */
async function userInfo(config: oidc.Configuration, accessToken: string, subject: string): Promise<Record<string, unknown>> {
  if (!config.serverMetadata().userinfo_endpoint) return {};
  try {
    return await oidc.fetchUserInfo(config, accessToken, subject);
  } catch (error) {
    throw new BatonError('sign_in_failed', `The provider's userinfo endpoint did not give the person's profile: ${messageOf(error)}`, providerErrorOf(error));
  }
}

/** The provider's own error code (`invalid_client`, `access_denied`…), as `provider_error` on the problem. */
function providerErrorOf(error: unknown): { extra?: { provider_error: string } } {
  const code = (error as { error?: unknown } | null)?.error;
  return typeof code === 'string' ? { extra: { provider_error: code } } : {};
}

/** openid-client's errors carry the provider's `error` and `error_description`; say them. */
function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { error?: unknown; error_description?: unknown });
  const provider = typeof cause.error === 'string' ? ` (${cause.error}${typeof cause.error_description === 'string' ? `: ${cause.error_description}` : ''})` : '';
  // "invalid response encountered" says little; its cause names the check (state, iss, exp…).
  const why = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${why}${provider}`;
}
