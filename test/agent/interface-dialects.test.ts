import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from '../graphql/client.ts';
import { connectV2, listen } from '../mcp/clients.ts';

/**
 * Each interface speaks its own way about the same operations: what its schemas advertise is what
 * this server enforces (its configured bounds), and its problems name its own calls.
 */
const LEASE_TTL = { defaultS: 120, minS: 60, maxS: 900 };

let t: TestServer;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer({ leaseTtl: LEASE_TTL });
  mcp = await connectV2(await listen(t), t.adminToken, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

describe('ttl_s advertises the bounds this server enforces (BATON_LEASE_TTL_MIN_S, _MAX_S)', () => {
  const CLAIMS = ['tasks_claim', 'tasks_claim_next', 'leases_heartbeat', 'leases_cycle'];

  it('in the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/api/v1/openapi.json')).json<{ paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>> } }> } }>> }>();
    const bodies = Object.values(doc.paths).flatMap((item) => Object.values(item)).filter((op) => CLAIMS.includes(op.operationId));
    expect(bodies.map((op) => op.operationId).sort()).toEqual([...CLAIMS].sort());
    for (const op of bodies) {
      const ttl = op.requestBody?.content['application/json']?.schema.properties['ttl_s'];
      expect(ttl, op.operationId).toMatchObject({ type: 'integer', minimum: 60, maximum: 900 });
      expect(String(ttl?.['description'])).toContain('120');
    }
  });

  it('in the served limits table', async () => {
    const page = (await t.request('GET', '/spec/api.md')).body;
    expect(page).toMatch(/`ttl_s`: 60–900/);
    expect(page).not.toMatch(/`ttl_s`: 1–86400/);
  });

  it('in the MCP tools', async () => {
    const { tools } = await mcp.listTools();
    for (const name of CLAIMS) {
      const ttl = tools.find((tool) => tool.name === name)?.inputSchema.properties?.['ttl_s'] as Record<string, unknown> | undefined;
      expect(ttl, name).toMatchObject({ type: 'integer', minimum: 60, maximum: 900 });
    }
  });

  it('in the GraphQL schema, whose ttl_s arguments describe them', async () => {
    const res = await graphql<{ __type: { fields: { name: string; args: { name: string; description: string | null; defaultValue: string | null }[] }[] } }>(
      t,
      '{ __type(name: "Mutation") { fields { name args { name description defaultValue } } } }',
    );
    const ttls = (res.data?.__type.fields ?? []).flatMap((field) => field.args.filter((arg) => arg.name === 'ttl_s'));
    expect(ttls.length).toBeGreaterThanOrEqual(CLAIMS.length);
    for (const arg of ttls) {
      expect(arg.description).toContain('60–900');
      // No default: a heartbeat without ttl_s keeps its lease's own length.
      expect(arg.defaultValue).toBeNull();
    }
  });

  it('which are what a claim is held to: below them refused, at the top accepted', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'bounded lease' } })).json<{ id: string }>();
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: { ttl_s: 30 } })).status).toBe(400);
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: { ttl_s: 900 } })).status).toBe(200);
  });
});
