import { type JWTVerifyGetKey, jwtVerify } from 'jose';
import { BatonError } from '../../errors.ts';
import type { ProviderLogout } from '../../service/sessions.ts';

/** The member of `events` that makes a JWT a back-channel logout token (OpenID Back-Channel Logout 1.0 §2.4). */
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

export interface LogoutTokenCheck {
  readonly issuer: string;
  readonly clientId: string;
  /** The provider's signing keys (its `jwks_uri`). */
  readonly keys: JWTVerifyGetKey;
  /** The algorithms the provider signs ID tokens with; `none` is never taken. */
  readonly algorithms: readonly string[] | undefined;
  readonly now: Date;
  /** How far the provider's clock may be from ours, and how old a token may be, in seconds. */
  readonly skewS: number;
  readonly maxAgeS: number;
}

/**
 * Verifies a logout token as §2.6 asks: signed by the provider's keys, its `iss` and `aud` ours,
 * `iat` recent, a `jti`, the logout event in `events`, a `sub` or a `sid`, and no `nonce` (so an
 * ID token cannot pass for one). Answers who signed out; refuses with 400 `invalid_parameter`.
 */
export async function verifyLogoutToken(token: string, check: LogoutTokenCheck): Promise<ProviderLogout> {
  const refuse = (why: string) => new BatonError('invalid_parameter', `The logout token was refused: ${why}.`, { hint: 'Only the OpenID provider this server signs in with posts here (OpenID Back-Channel Logout 1.0), with a logout token it signed for this client.' });
  const { payload } = await jwtVerify(token, check.keys, {
    issuer: check.issuer,
    audience: check.clientId,
    algorithms: check.algorithms?.filter((alg) => alg !== 'none'),
    currentDate: check.now,
    clockTolerance: check.skewS,
    maxTokenAge: check.maxAgeS + check.skewS,
    requiredClaims: ['iat', 'jti', 'events'],
  }).catch((error: unknown) => {
    throw refuse(error instanceof Error ? error.message : String(error));
  });
  const events = payload.events;
  if (typeof events !== 'object' || events === null || !(LOGOUT_EVENT in events)) throw refuse(`its \`events\` lack ${LOGOUT_EVENT}`);
  if ('nonce' in payload) throw refuse('it carries a `nonce`, as an ID token does');
  const subject = typeof payload.sub === 'string' ? payload.sub : null;
  const providerSessionId = typeof payload.sid === 'string' ? payload.sid : null;
  if (subject === null && providerSessionId === null) throw refuse('it names neither a `sub` nor a `sid`');
  return { issuer: check.issuer, subject, providerSessionId, issuedAt: new Date((payload.iat ?? 0) * 1000) };
}
