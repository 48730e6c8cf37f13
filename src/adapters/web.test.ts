import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { registerWeb } from './web.ts';

describe('registerWeb', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('without a build, still starts and says at / how to build', async () => {
    const app = Fastify();
    const message = await registerWeb(app, join(tmpdir(), 'baton-no-such-build/'));
    expect(message).toContain('npm run build:web');
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(503);
    // A problem (the server's error handler writes it out with its hint: run `npm run build:web`).
    expect(res.json()).toMatchObject({ code: 'web_app_not_built' });
    expect((await app.inject({ method: 'GET', url: '/tasks/tsk_1' })).statusCode).toBe(404);
    await app.close();
  });

  it('answers client routes with index.html (no-cache, strict CSP) and nothing else', async () => {
    const dist = await mkdtemp(join(tmpdir(), 'baton-web-'));
    dirs.push(dist);
    await mkdir(join(dist, 'assets'));
    await writeFile(join(dist, 'index.html'), '<!doctype html><title>Baton</title>');
    await writeFile(join(dist, 'assets', 'index-abc123.js'), 'export {}');
    const app = Fastify();
    expect(await registerWeb(app, `${dist}/`)).toBeUndefined();
    for (const url of ['/', '/tasks/tsk_1', '/approvals', '/agents', '/agents/agt_1']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
    }
    const asset = await app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const url of ['/api/v1/tasks', '/spec/index.md', '/errors/not_found', '/mcp', '/graphql', '/healthz', '/metrics', '/tasks']) {
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
    await app.close();
  });

  it('serves the index a rebuild wrote, naming its new assets, without a restart', async () => {
    const dist = await mkdtemp(join(tmpdir(), 'baton-web-'));
    dirs.push(dist);
    await mkdir(join(dist, 'assets'));
    await writeFile(join(dist, 'index.html'), '<script src="/assets/index-old.js"></script>');
    const app = Fastify();
    await registerWeb(app, `${dist}/`);
    expect((await app.inject({ method: 'GET', url: '/' })).body).toContain('index-old.js');
    await writeFile(join(dist, 'index.html'), '<script src="/assets/index-new.js"></script>');
    expect((await app.inject({ method: 'GET', url: '/inbox' })).body).toContain('index-new.js');
    await app.close();
  });
});
