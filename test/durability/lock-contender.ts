/**
 * One contender for a PGlite data directory's lock, as `node test/durability/lock-contender.ts
 * <dir>` (one-writer.test.ts starts several at once): takes the lock the way Baton's start does
 * (`lockDataDir`) when a line arrives on stdin, so contenders that are all loaded try at the same
 * moment; prints `held` or `refused: <message>`; a holder keeps the lock until stdin ends.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { lockDataDir } from '../../src/store/data-dir-lock.ts';

const dir = process.argv[2] ?? '';
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await once(lines, 'line');
const lock = await lockDataDir(dir).catch((error: unknown) => {
  process.stdout.write(`refused: ${error instanceof Error ? error.message : String(error)}\n`);
});
if (lock) {
  process.stdout.write('held\n');
  await once(lines, 'close');
  await lock.release();
}
