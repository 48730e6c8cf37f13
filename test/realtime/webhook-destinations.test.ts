import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ webhookAllowPrivate: false, webhookIntervalMs: 0 });
});
afterAll(() => t.close());

describe('webhook destinations written as IPv6 forms that embed an IPv4 address', () => {
  it('are refused when the embedded address is not public (issue 22 item 9: http://[::127.0.0.1]/ was accepted)', async () => {
    const refusedUrls: [string, string][] = [
      ['http://[::127.0.0.1]/hook', '127.0.0.1'],
      ['http://[::7f00:1]/hook', '127.0.0.1'],
      ['http://[::ffff:169.254.169.254]/latest', '169.254.169.254'],
      ['http://[::ffff:0:10.0.0.1]/hook', '10.0.0.1'],
      ['http://[64:ff9b::a9fe:a9fe]/latest', '169.254.169.254'],
      ['http://[64:ff9b::192.168.0.10]/hook', '192.168.0.10'],
      ['http://[2002:a00:1::1]/hook', '10.0.0.1'],
      ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook', '127.0.0.1'],
      ['http://[2001:0:4136:e378:8000:63bf:128.255.255.254]/hook', '127.0.0.1'],
    ];
    for (const [url, embedded] of refusedUrls) {
      const res = await t.request('POST', '/api/v1/webhooks', { body: { url } });
      expect(res.status, url).toBe(422);
      const problem = res.json<{ code: string; detail: string }>();
      expect(problem.code, url).toBe('webhook_url_refused');
      expect(problem.detail, url).toContain(`which embeds ${embedded}, a `);
    }
  });

  it('are accepted when the embedded address is public', async () => {
    for (const url of ['http://[::ffff:8.8.8.8]/hook', 'http://[64:ff9b::8.8.8.8]/hook', 'http://[2002:808:808::1]/hook']) {
      const res = await t.request('POST', '/api/v1/webhooks', { body: { url, enabled: false } });
      expect(res.status, url).toBe(201);
    }
  });
});
