import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendStatement } from '../../src/store/connection.ts';
import type { Database } from '../../src/store/database.ts';
import { engine, freshDatabase } from '../harness.ts';
import { pollUntil } from '../leases/instances.ts';

let database: Database;
beforeAll(async () => {
  ({ database } = await freshDatabase());
});
afterAll(() => database.close());

const notify = (channel: string) => sendStatement(database.db, "SELECT pg_notify($1, '')", [channel]);

/**
 * Resolves once a NOTIFY on a channel sent after `channel`'s arrives: notifications reach a
 * listener in commit order, so anything `channel` was going to deliver has been delivered by then.
 */
async function settled(): Promise<void> {
  let arrived: () => void = () => undefined;
  const barrier = new Promise<void>((resolve) => (arrived = resolve));
  const stop = await database.listen('test_barrier', () => arrived());
  await notify('test_barrier');
  await barrier;
  await stop();
}

it('delivers a channel NOTIFY between listen and stop only, to each of its listeners', async () => {
  const heard: string[] = [];
  await notify('test_channel');
  const stopFirst = await database.listen('test_channel', () => heard.push('first'));
  const stopSecond = await database.listen('test_channel', () => heard.push('second'));
  await notify('test_channel');
  await settled();
  expect(heard.sort()).toEqual(['first', 'second']);

  await stopFirst();
  await notify('test_channel');
  await settled();
  expect(heard.sort()).toEqual(['first', 'second', 'second']);

  // The last listener gone, the channel is UNLISTENed; listening again takes effect at once.
  await stopSecond();
  await notify('test_channel');
  await settled();
  expect(heard).toHaveLength(3);
  const stopAgain = await database.listen('test_channel', () => heard.push('again'));
  await notify('test_channel');
  await settled();
  expect(heard.filter((h) => h === 'again')).toEqual(['again']);
  await stopAgain();
});

it.runIf(engine === 'postgres')('re-LISTENs after its connection drops, and calls the listeners once for what they may have missed', async () => {
  let heard = 0;
  const stop = await database.listen('test_dropped', () => heard++);
  try {
    const { rows } = await sendStatement<{ killed: boolean }>(
      database.db,
      "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%test_dropped%'",
      [],
    );
    expect(rows).toEqual([{ killed: true }]);
    await pollUntil(async () => (heard === 1 ? true : undefined), 5000, 'the call after the reconnect');
    await notify('test_dropped');
    await pollUntil(async () => (heard === 2 ? true : undefined), 5000, 'a NOTIFY on the new connection');
  } finally {
    await stop();
  }
});
