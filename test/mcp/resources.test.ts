import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV1, connectV2, listen } from './clients.ts';

/**
 * The live resources (spec/mcp.md § Resources) through the SDKs' own clients on a listening Baton:
 * a task, the caller's inbox and ready queue, read through the operations, and updates pushed on
 * the 2026-07-28 `subscriptions/listen` stream when the task changes over REST.
 */
let t: TestServer;
let baseUrl: string;
let agent: { id: string; token: string };
let modern: Client;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
  modern = await connectV2(baseUrl, agent.token, 'modern');
});
afterAll(async () => {
  await modern.close();
  await t.close();
});

async function createTask(title: string, extra: Record<string, unknown> = {}): Promise<{ id: string; version: number }> {
  const response = await t.request('POST', '/api/v1/tasks', { body: { title, ...extra } });
  expect(response.status, response.body).toBe(201);
  return response.json<{ id: string; version: number }>();
}

function contentOf(result: { contents: unknown[] }): Record<string, unknown> {
  const [first] = result.contents as { mimeType?: string; text?: string }[];
  expect(first?.mimeType).toBe('application/json');
  return JSON.parse(first?.text ?? '') as Record<string, unknown>;
}

describe('MCP resources', () => {
  it('lists the inbox and ready queue, and the task template; advertises no listChanged, and subscribe only on the modern revision', async () => {
    const { resources } = await modern.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(expect.arrayContaining(['baton://inbox', 'baton://ready']));
    const { resourceTemplates } = await modern.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain('baton://tasks/{id}');
    const capabilities = modern.getServerCapabilities();
    expect(capabilities?.resources).toEqual({ listChanged: false, subscribe: true });
    expect(capabilities?.tools?.listChanged).toBe(false);
    expect(capabilities?.prompts?.listChanged).toBe(false);

    const legacy = await connectV1(baseUrl, agent.token);
    try {
      // Served statelessly: a 2025 client over HTTP is offered reads, not subscriptions.
      expect(legacy.getServerCapabilities()?.resources).toEqual({ listChanged: false });
      const { resourceTemplates: v1Templates } = await legacy.listResourceTemplates();
      expect(v1Templates.map((template) => template.uriTemplate)).toContain('baton://tasks/{id}');
    } finally {
      await legacy.close();
    }
  });

  it('reads a task, the inbox and the ready queue through the operations, as the caller', async () => {
    const mine = await createTask('Resource: assigned to the agent', { assignee: agent.id });
    const open = await createTask('Resource: anyone may claim');
    const later = await createTask('Resource: scheduled later', { not_before: '2999-01-01T00:00:00Z' });
    const task = contentOf(await modern.readResource({ uri: `baton://tasks/${mine.id}` }));
    expect(task).toMatchObject({ id: mine.id, status: 'todo', title: 'Resource: assigned to the agent' });

    const inbox = contentOf(await modern.readResource({ uri: 'baton://inbox' })) as { assigned: { id: string }[]; held: unknown[] };
    expect(inbox.assigned.map((entry) => entry.id)).toEqual([mine.id]);
    expect(inbox.held).toEqual([]);

    const ready = contentOf(await modern.readResource({ uri: 'baton://ready' })) as { data: { id: string }[] };
    const ids = ready.data.map((entry) => entry.id);
    expect(ids).toEqual(expect.arrayContaining([mine.id, open.id]));
    expect(ids).not.toContain(later.id);

    await expect(modern.readResource({ uri: 'baton://tasks/tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV' })).rejects.toThrow(/No task tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV/);
  });

  it('pushes notifications/resources/updated on a listen stream when the task changes over REST', async () => {
    const task = await createTask('Resource: watched');
    const updates: string[] = [];
    let heard: () => void = () => undefined;
    modern.setNotificationHandler('notifications/resources/updated', (notification) => {
      updates.push(notification.params.uri);
      heard();
    });
    const subscription = await modern.listen({ resourceSubscriptions: [`baton://tasks/${task.id}`, 'baton://inbox'] });
    try {
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual([`baton://tasks/${task.id}`, 'baton://inbox']);
      const arrived = new Promise<void>((resolve) => {
        heard = () => {
          if (updates.includes(`baton://tasks/${task.id}`) && updates.includes('baton://inbox')) resolve();
        };
      });
      const changed = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Resource: watched, renamed' }, ifMatch: `"${task.version}"` });
      expect(changed.status, changed.body).toBe(200);
      await arrived;
      // Only the URIs listened for arrive (the ready queue changed too, but was not asked for).
      expect(new Set(updates)).toEqual(new Set([`baton://tasks/${task.id}`, 'baton://inbox']));
      const reread = contentOf(await modern.readResource({ uri: `baton://tasks/${task.id}` }));
      expect(reread['title']).toBe('Resource: watched, renamed');
    } finally {
      await subscription.close();
    }
  });
});
