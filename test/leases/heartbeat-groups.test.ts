/**
 * Heartbeats that arrive together share one transaction (src/service/write-groups.ts); each keeps
 * what it has alone: its renewal, its `lease.renewed` event under its own key, its stored answer,
 * and its own refusal when it has one. Sent as real concurrent requests to one instance.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, type Principal } from '../harness.ts';
import { claimBatch as claimTasks, type Cluster, type EventBody, INSTANCES, type LeaseBody, pages, startInstances, WORKER_SCOPES } from './instances.ts';

let cluster: Cluster;
let agent: Principal;
let other: Principal;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { sweepIntervalMs: 0 });
  agent = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  other = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
});
afterAll(() => cluster.close());

const claimBatch = (who: Principal, count: number) => claimTasks(cluster, who.token, count, 'heartbeat-groups');

const heartbeat = (token: string, leaseId: string, key: string, body: Record<string, unknown> = {}) =>
  cluster.request('POST', `/api/v1/leases/${leaseId}/heartbeat`, { token, key, body, via: 0 });

const renewals = async () => pages<EventBody>(cluster, '/api/v1/events?types=lease.renewed&view=full');

/** Instance 0's totals of `baton_write_groups_total` and `baton_write_group_calls_total` for heartbeats. */
async function groupCounts(): Promise<{ groups: number; calls: number }> {
  const text = (await cluster.request('GET', '/metrics', { via: 0 })).body;
  const read = (name: string) => Number(new RegExp(`^${name}\\{operation="leases_heartbeat"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { groups: read('baton_write_groups_total'), calls: read('baton_write_group_calls_total') };
}

describe('heartbeats sent together', () => {
  it('share transactions, and each renews its lease, appends its own event under its own key and stores its own answer', async () => {
    const claims = await claimBatch(agent, 24);
    const before = await renewals();
    let grouped = false;
    // Which calls land in one group depends on timing; over a few bursts some always do (a group runs while the next waits).
    for (let round = 0; round < 5 && !grouped; round++) {
      const counted = await groupCounts();
      const keys: string[] = claims.map(() => randomUUID());
      const answers = await Promise.all(claims.map((c, i) => heartbeat(agent.token, c.lease.id, keys[i] ?? '', i % 3 === 0 ? { note: `step ${round}.${i}` } : {})));
      const now = await groupCounts();
      expect(now.calls - counted.calls).toBe(claims.length);
      grouped = now.groups - counted.groups < claims.length;
      for (const [i, res] of answers.entries()) {
        expect(res.status, res.body).toBe(200);
        const lease = res.json<LeaseBody & { next_actions: unknown[] }>();
        expect(lease).toMatchObject({ id: claims[i]?.lease.id, state: 'active' });
        expect(lease.next_actions.length).toBeGreaterThan(0);
        // A retry with the same key answers the stored text, byte for byte, and renews nothing.
        const again = await heartbeat(agent.token, lease.id, keys[i] ?? '', i % 3 === 0 ? { note: `step ${round}.${i}` } : {});
        expect(again.headers['idempotency-replayed']).toBe('true');
        expect(again.body).toBe(res.body);
        expect((await cluster.request('GET', `/api/v1/leases/${lease.id}`, { token: agent.token })).json<LeaseBody>().expires_at).toBe(lease.expires_at);
      }
      const events = (await renewals()).filter((e) => !before.some((b) => b.id === e.id));
      const mine = events.filter((e) => keys.includes((e as EventBody & { idempotency_key?: string }).idempotency_key ?? ''));
      expect(mine).toHaveLength(claims.length);
      for (const [i, c] of claims.entries()) {
        const own = mine.filter((e) => (e.data as { lease_id: string }).lease_id === c.lease.id);
        expect(own, c.lease.id).toHaveLength(1);
        expect((own[0]?.data as { note?: string }).note).toBe(i % 3 === 0 ? `step ${round}.${i}` : undefined);
        expect(own[0]?.actor).toMatchObject({ id: agent.id });
      }
      before.push(...events);
    }
    // PGlite answers one statement at a time, in one process: a group has mostly committed before the
    // next heartbeat's authentication is answered, so heartbeats rarely meet there (nor need to).
    if (engine === 'postgres') expect(grouped, 'no two heartbeats of five bursts shared a transaction').toBe(true);
  });

  it('refuses, within a burst, what each would be refused alone, and stores that refusal under its key; the rest renew', async () => {
    const mine = await claimBatch(agent, 6);
    const [theirs] = await claimBatch(other, 1);
    const [released, ...live] = mine;
    expect((await cluster.request('POST', `/api/v1/leases/${released?.lease.id}/release`, { token: agent.token, body: {} })).status).toBe(200);
    const twice = live[0]?.lease.id ?? '';
    const repeated = randomUUID();
    for (let round = 0; round < 3; round++) {
      const calls: { lease: string; key: string; want: number; code?: string }[] = [
        ...live.map((c) => ({ lease: c.lease.id, key: randomUUID(), want: 200 })),
        { lease: twice, key: randomUUID(), want: 200 },
        { lease: released?.lease.id ?? '', key: randomUUID(), want: 409, code: 'lease_inactive' },
        { lease: theirs?.lease.id ?? '', key: randomUUID(), want: 403, code: 'not_lease_holder' },
        { lease: `lea_${'0'.repeat(26)}`, key: randomUUID(), want: 404, code: 'not_found' },
      ];
      const answers = await Promise.all(calls.map((c) => heartbeat(agent.token, c.lease, c.key)));
      for (const [i, res] of answers.entries()) {
        const call = calls[i];
        expect(res.status, `${call?.lease}: ${res.body}`).toBe(call?.want);
        if (call?.code) {
          expect(res.json()).toMatchObject({ code: call.code });
          const again = await heartbeat(agent.token, call.lease, call.key);
          expect(again.headers['idempotency-replayed']).toBe('true');
          expect(again.body).toBe(res.body);
        }
      }
      // One key sent twice at once: applied once; the other answers its stored outcome or that it is still running.
      const pair = await Promise.all([0, 1].map(() => heartbeat(agent.token, twice, `${repeated}-${round}`)));
      expect(pair.map((r) => r.status).sort()).toSatisfy((s: number[]) => s[0] === 200 && (s[1] === 200 || s[1] === 409));
      const keyed = (await renewals()).filter((e) => (e as EventBody & { idempotency_key?: string }).idempotency_key === `${repeated}-${round}`);
      expect(keyed).toHaveLength(1);
    }
    const theirLease = (await cluster.request('GET', `/api/v1/leases/${theirs?.lease.id}`, { token: other.token })).json<LeaseBody>();
    expect(theirLease.expires_at).toBe(theirs?.lease.expires_at);
  });
});
