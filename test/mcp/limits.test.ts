import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf } from './clients.ts';

/** Every HTTP request to /mcp is authenticated on its own: the token's rate budget and its revocation apply per request. */
let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer({ rateLimit: { limit: 4, windowS: 3600 } });
  baseUrl = await listen(t);
});
afterAll(() => t.close());

describe('per-request authentication on /mcp', () => {
  it('counts every MCP request against the token\'s rate budget and refuses past it with 429 rate_limited', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    // Connecting already spends part of the budget of 4 (initialize, initialized, …); calls spend the rest.
    const client = await connectV2(baseUrl, agent.token, 'legacy');
    let refusal: unknown;
    for (let call = 0; call < 4 && refusal === undefined; call++) {
      await client.callTool({ name: 'whoami', arguments: {} }).catch((error: unknown) => (refusal = error));
    }
    expect(String(refusal)).toMatch(/429[\s\S]*"code":"rate_limited"/);
    await client.close();
  });

  it('refuses a token revoked while its client is connected, on its next request', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    const client = await connectV2(baseUrl, agent.token, 'modern');
    const me = outputOf<{ token: { id: string } }>(await client.callTool({ name: 'whoami', arguments: {} }));
    const revoked = await t.request('DELETE', `/api/v1/tokens/${me.token.id}`);
    expect(revoked.status, revoked.body).toBe(200);
    await expect(client.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow(/401|invalid_token/);
    await client.close();
  });
});
