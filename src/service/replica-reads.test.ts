import { expect, it } from 'vitest';
import { lsnValue } from './replica-reads.ts';

it('orders LSNs as the WAL does, the high word first', () => {
  expect(lsnValue('0/0')).toBe(0n);
  expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
  expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
  expect(lsnValue('0/A') < lsnValue('0/10')).toBe(true);
});
