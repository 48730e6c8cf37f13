import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

let t: TestServer;
let version: string;
beforeAll(async () => {
  t = await startTestServer();
  version = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
});
afterAll(() => t.close());

describe('which version runs', () => {
  it('/healthz says the release, with no token', async () => {
    const res = await t.request('GET', '/healthz', { token: null });
    expect(res.json()).toEqual({ status: 'ok', version });
  });

  it('the manifest says it in both views, beside the API version', async () => {
    for (const view of ['compact', 'full']) {
      const res = await t.request('GET', `/api/v1?view=${view}`);
      expect(res.json()).toMatchObject({ version: 'v1', release: version });
    }
    expect((await t.request('GET', '/api/v1', { token: null })).json()).toMatchObject({ release: version });
  });

  it('/metrics serves baton_build_info{version,node} 1', async () => {
    const res = await t.request('GET', '/metrics');
    expect(res.body).toContain(`baton_build_info{version="${version}",node="${process.versions.node}"} 1`);
  });
});
