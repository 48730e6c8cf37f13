import { UNKNOWN, type Walker } from './walk.ts';

/** artifacts.*: text and binary uploads, reads with and without the body, refusals. */
export async function walkArtifacts(w: Walker): Promise<void> {
  const { call, present, who } = w;
  const task = present((await call('POST', '/api/v1/tasks', { body: { title: 'has notes' } }, 201)).json<{ id?: string }>(), 'task');
  const text = await call('POST', '/api/v1/artifacts', { body: { content: '# Notes\n\nLong text.', content_type: 'text/markdown', name: 'notes.md', task_id: task.id } }, 201);
  const id = present(text.json<{ id?: string }>().id, 'artifact id');
  await call('POST', '/api/v1/artifacts', { body: { content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' } }, 201);
  await call('POST', '/api/v1/artifacts', { body: { content: 'x', encoding: 'base64' } }, 400);
  await call('POST', '/api/v1/artifacts', { body: { content: 'x', task_id: UNKNOWN.task } }, 404);
  await call('POST', '/api/v1/artifacts', { body: { content: 'x' }, token: who.reader.token }, 403);
  await call('GET', `/api/v1/artifacts/${id}`, { token: who.reader.token }, 200);
  await call('GET', `/api/v1/artifacts/${id}?content=utf8`, {}, 200);
  await call('GET', `/api/v1/artifacts/${id}?content=base64`, {}, 200);
  await call('GET', `/api/v1/artifacts/${id}`, { token: who.eventsOnly.token }, 403);
  await call('GET', `/api/v1/artifacts/${UNKNOWN.artifact}`, {}, 404);
  await call('GET', '/api/v1/artifacts/not-an-artifact', {}, 400);
  await call('GET', `/api/v1/tasks/${task.id}`, {}, 200);
}
