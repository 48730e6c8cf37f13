import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';

const MiB = 1024 * 1024;
let t: TestServer;
beforeAll(async () => {
  // A 6 MiB limit: room for the 5 MiB round trip, and cheap to exceed.
  t = await startTestServer({ artifactMaxBytes: 6 * MiB, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

interface ArtifactBody {
  id: string;
  size: number;
  content_type: string;
  sha256: string;
  href: string;
  task_id: string | null;
  content?: string;
}

/** GET raw bytes (the harness decodes bodies as text, which would corrupt binary). */
async function download(href: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url: href, headers: { authorization: `Bearer ${t.adminToken}`, ...headers } });
}

describe('artifacts', () => {
  it('round-trips a 5 MiB binary byte for byte', async () => {
    const bytes = randomBytes(5 * MiB);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const created = await t.request('POST', '/api/v1/artifacts', { body: { content: bytes.toString('base64'), encoding: 'base64', name: 'blob.bin' } });
    expect(created.status, created.body.slice(0, 500)).toBe(201);
    const artifact = created.json<ArtifactBody>();
    expect(artifact).toMatchObject({ size: 5 * MiB, sha256, content_type: 'application/octet-stream', href: `/api/v1/artifacts/${artifact.id}/content`, task_id: null });
    expect(artifact.content).toBeUndefined();
    expect(created.headers.location).toBe(`/api/v1/artifacts/${artifact.id}`);

    const raw = await download(artifact.href);
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toBe('application/octet-stream');
    expect(raw.headers.etag).toBe(`"${sha256}"`);
    expect(raw.rawPayload.equals(bytes)).toBe(true);
    expect((await download(artifact.href, { 'if-none-match': `"${sha256}"` })).statusCode).toBe(304);

    const asJson = await t.request('GET', `/api/v1/artifacts/${artifact.id}?content=base64`);
    expect(Buffer.from(asJson.json<ArtifactBody>().content ?? '', 'base64').equals(bytes)).toBe(true);
  });

  it('refuses uploads past the artifact limit with 413, whether the JSON fits the route or not', async () => {
    const over = randomBytes(6 * MiB + 1).toString('base64');
    const res = await t.request('POST', '/api/v1/artifacts', { body: { content: over, encoding: 'base64' } });
    expectProblem(res, 413, 'payload_too_large');
    const far = 'A'.repeat(10 * MiB);
    expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: far, encoding: 'base64' } }), 413, 'payload_too_large');
    const count = await t.database.db.selectFrom('artifacts').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('attaches text to a task: the task carries a reference, never the body', async () => {
    const task = await createTask(t);
    const text = '# Findings\n\n' + 'A long paragraph. '.repeat(400);
    const created = await t.request('POST', '/api/v1/artifacts', { body: { content: text, content_type: 'text/markdown', task_id: task.id } });
    expect(created.status, created.body).toBe(201);
    const artifact = created.json<ArtifactBody>();
    const read = await t.request('GET', `/api/v1/tasks/${task.id}`);
    expect(read.json()).toMatchObject({
      version: task.version + 1,
      artifacts: [{ id: artifact.id, size: Buffer.byteLength(text), content_type: 'text/markdown', sha256: artifact.sha256, href: artifact.href }],
    });
    expect(read.body).not.toContain('A long paragraph');
    expect((await t.request('GET', `/api/v1/artifacts/${artifact.id}?content=utf8`)).json<ArtifactBody>().content).toBe(text);
    const events = await eventsOf(t, task.id);
    expect(events.at(-1)).toMatchObject({ type: 'artifact.created', data: { artifact_id: artifact.id, size: Buffer.byteLength(text) } });
    expect(JSON.stringify(events.at(-1)?.data)).not.toContain('A long paragraph');
  });

  it('names an artifact in the task\'s reference by its file name, where it was given one', async () => {
    const task = await createTask(t);
    const named = (await t.request('POST', '/api/v1/artifacts', { body: { content: 'plan', name: 'drop-plan.md', task_id: task.id } })).json<ArtifactBody>();
    const unnamed = (await t.request('POST', '/api/v1/artifacts', { body: { content: 'diff', task_id: task.id } })).json<ArtifactBody>();
    const refs = (await t.request('GET', `/api/v1/tasks/${task.id}`)).json<{ artifacts: Record<string, unknown>[] }>().artifacts;
    expect(refs.find((r) => r.id === named.id)).toMatchObject({ name: 'drop-plan.md' });
    // No name: no member (a ref stays lean), as v1 answered before names were carried.
    expect(Object.keys(refs.find((r) => r.id === unnamed.id) ?? {}).sort()).toEqual(['content_type', 'href', 'id', 'sha256', 'size']);
  });

  it('refuses a task description over budget with a pointer to artifacts', async () => {
    const res = await t.request('POST', '/api/v1/tasks', { body: { title: 'too long', description: 'x'.repeat(4001) } });
    const problem = expectProblem(res, 400, 'validation_failed');
    expect(problem.detail).toContain('/api/v1/artifacts');
  });

  it('refuses bad input, unknown tasks and callers without artifacts:write', async () => {
    expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: 'not base64!', encoding: 'base64' } }), 400, 'validation_failed');
    const ghost = 'tsk_01JZ00000000000000000000AA';
    expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: 'x', task_id: ghost } }), 404, 'not_found');
    const reader = await t.addPrincipal({ scopes: ['tasks:read'] });
    expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: 'x' }, token: reader.token }), 403, 'forbidden_scope');
    const binary = await t.request('POST', '/api/v1/artifacts', { body: { content: Buffer.from([0xff, 0xfe]).toString('base64'), encoding: 'base64' } });
    const id = binary.json<ArtifactBody>().id;
    expectProblem(await t.request('GET', `/api/v1/artifacts/${id}?content=utf8`, { token: reader.token }), 400, 'invalid_parameter');
    expectProblem(await download('/api/v1/artifacts/art_01JZ00000000000000000000AA/content').then((r) => ({ status: r.statusCode, headers: r.headers, body: r.body, json: <T>() => JSON.parse(r.body) as T })), 404, 'not_found');
  });

  it('refuses a content type that is no header value (a line break, non-ASCII); one stored so before is served as octet-stream', async () => {
    for (const contentType of ['text/plain; a="x\r\nSet-Cookie: evil=1"', 'text/plain\r\n; a=b', 'text/plain; a="é"']) {
      expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: 'x', content_type: contentType } }), 400, 'validation_failed');
    }
    const quoted = await t.request('POST', '/api/v1/artifacts', { body: { content: 'x', content_type: 'text/plain; title="a b"' } });
    expect(quoted.status, quoted.body).toBe(201);
    // As an earlier release stored it, when the pattern let a line break through.
    const id = quoted.json<ArtifactBody>().id;
    await t.database.db.updateTable('artifacts').set({ content_type: 'text/plain; a="x\r\nSet-Cookie: evil=1"' }).where('id', '=', id).execute();
    const res = await download(`/api/v1/artifacts/${id}/content`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});
