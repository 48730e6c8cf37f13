import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import Provider from 'oidc-provider';

/** A person the test provider knows, by login name (their subject). */
export interface TestAccount {
  readonly name: string;
  readonly email: string;
  readonly groups: readonly string[];
}

export interface TestProvider {
  /** http://127.0.0.1:<port>: the issuer, and where its discovery document is. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (oidc-provider) on a free port, with one confidential client `baton`
 * allowed to return to `redirectUri`, PKCE required, the `groups` claim and the email (verified, so it
 * takes up invitations) in the ID token (or at userinfo only), and its development login and consent pages (any password).
 */
export async function startProvider(options: {
  redirectUri: string;
  accounts: Record<string, TestAccount>;
  idTokenTtlS?: number;
  claimsAt?: 'id_token' | 'userinfo';
  clientAuth?: 'client_secret_post' | 'client_secret_basic';
  /** Where the provider posts logout tokens (OpenID Back-Channel Logout 1.0), each naming the sign-in's `sid`. */
  backchannelLogoutUri?: string;
  /** The private JWK it signs with (its default keys otherwise). */
  signingKey?: JWK;
}): Promise<TestProvider> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'baton';
  const clientSecret = 'baton-test-client-secret';
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId, client_secret: clientSecret, redirect_uris: [options.redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: options.clientAuth ?? 'client_secret_post',
      ...(options.backchannelLogoutUri ? { backchannel_logout_uri: options.backchannelLogoutUri, backchannel_logout_session_required: true } : {}),
    }],
    ...(options.signingKey ? { jwks: { keys: [options.signingKey] } } : {}),
    // `clientAuth` alone is what the provider takes, and says so in its metadata.
    ...(options.clientAuth ? { clientAuthMethods: [options.clientAuth] } : {}),
    pkce: { required: () => true },
    claims: { openid: ['sub'], profile: ['name', 'groups'], email: ['email', 'email_verified'] },
    // The claims go in the ID token itself, or (`claimsAt: 'userinfo'`, what OpenID Core §5.4 says of the code flow) only at userinfo.
    conformIdTokenClaims: options.claimsAt === 'userinfo',
    findAccount: (_ctx, sub) => {
      const account = options.accounts[sub];
      return account ? { accountId: sub, claims: () => ({ sub, name: account.name, email: account.email, email_verified: true, groups: [...account.groups] }) } : undefined;
    },
    ttl: { IdToken: options.idTokenTtlS ?? 3600 },
    cookies: { keys: ['oidc-provider-test-cookie-key'] },
    features: { devInteractions: { enabled: true }, backchannelLogout: { enabled: options.backchannelLogoutUri !== undefined } },
    // Its own requests (logout tokens to Baton) go to 127.0.0.1 here: without its guard against
    // special-use addresses (the `dispatcher` it passes), and without its 2.5 s limit (the
    // `signal`), which a busy test machine can exceed. A real provider reaches Baton by a routable name.
    fetch: (url, options) => {
      const { dispatcher: _guard, signal: _limit, ...init } = (options ?? {}) as RequestInit & { dispatcher?: unknown };
      return globalThis.fetch(url, init);
    },
  });
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));
  return {
    issuer,
    clientId,
    clientSecret,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
