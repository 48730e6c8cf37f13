import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import type { NewEventRow } from '../../src/store/events.ts';
import { type NewStoredResponse, storeResponse } from '../../src/store/idempotency.ts';
import { freshDatabase } from '../harness.ts';

/**
 * A write's last statement stores its response and appends its events. It commits only when the
 * write's whole transaction returns: a throw after it (shaping the answer, a later check) undoes it.
 * When a concurrent request has stored the key meanwhile, it must fail rather than store
 * nothing: otherwise the write it ends would commit without its stored response.
 */
describe('storing a write response as its last statement', () => {
  let database: Database;
  beforeAll(async () => {
    ({ database } = await freshDatabase());
  });
  afterAll(() => database.close());

  const now = new Date('2026-11-23T12:00:00Z');
  const response = (key: string, expiresAt: Date, body: string): NewStoredResponse => ({
    principal_id: 'agt_store_test',
    key,
    fingerprint: Buffer.from('ab', 'hex'),
    operation: 'tasks_create',
    status_code: 201,
    response_body: body,
    created_at: now,
    expires_at: expiresAt,
  });
  const event = (id: string): NewEventRow => ({
    id,
    type: 'task.created',
    subject: 'tsk_store_test',
    actor_id: 'agt_store_test',
    actor_kind: 'agent',
    token_id: null,
    machine: null,
    idempotency_key: null,
    data: {},
    created_at: now,
  });
  const stored = async (key: string) =>
    (await sql<{ response_body: string }>`SELECT response_body FROM idempotency_keys WHERE key = ${key}`.execute(database.db)).rows.map((r) => r.response_body);
  const events = async (id: string) => (await sql<{ id: string }>`SELECT id FROM events WHERE id = ${id}`.execute(database.db)).rows.length;

  /** One write transaction ending in storeResponse, rolled back (as the executor does) when it answers false. */
  const write = (row: NewStoredResponse, eventId: string) =>
    database.db.transaction().execute(async (tx) => {
        const ok = await storeResponse(tx, row, [event(eventId)]);
        if (!ok) throw new Error('key taken');
        return ok;
      })
      .catch((error: unknown) => (error as Error).message);

  it('stores the response and the events together', async () => {
    expect(await write(response('k-fresh', new Date(now.getTime() + 60_000), 'first'), 'evt_store_1')).toBe(true);
    expect(await stored('k-fresh')).toEqual(['first']);
    expect(await events('evt_store_1')).toBe(1);
  });

  it('answers false and commits nothing when a live response already holds the key', async () => {
    expect(await write(response('k-fresh', new Date(now.getTime() + 60_000), 'second'), 'evt_store_2')).toBe('key taken');
    expect(await stored('k-fresh')).toEqual(['first']);
    expect(await events('evt_store_2')).toBe(0);
  });

  it('commits nothing when the code after the last statement throws', async () => {
    const failure = new Error('shaping the answer failed');
    const written = database.db.transaction().execute(async (tx) => {
      expect(await storeResponse(tx, response('k-thrown', new Date(now.getTime() + 60_000), 'thrown'), [event('evt_store_thrown')])).toBe(true);
      throw failure;
    });
    await expect(written).rejects.toBe(failure);
    expect(await stored('k-thrown')).toEqual([]);
    expect(await events('evt_store_thrown')).toBe(0);
  });

  it('replaces a response whose key has expired', async () => {
    expect(await write(response('k-old', new Date(now.getTime() - 1), 'old'), 'evt_store_3')).toBe(true);
    expect(await write(response('k-old', new Date(now.getTime() + 60_000), 'new'), 'evt_store_4')).toBe(true);
    expect(await stored('k-old')).toEqual(['new']);
    expect(await events('evt_store_4')).toBe(1);
  });
});
