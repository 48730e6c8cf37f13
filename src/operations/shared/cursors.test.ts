import { describe, expect, it } from 'vitest';
import type { BatonError } from '../../errors.ts';
import { cursorCodec } from './cursors.ts';

const key = new Uint8Array(32).fill(7);
const cursors = cursorCodec(key);
const TASK = 'tsk_01JZ0000000000000000000000';
const DIGEST = '0123456789abcdef';

/** The problem `decode` throws, or null when it accepts the cursor. */
function refusal(kind: Parameters<typeof cursors.decode>[0], cursor: string): BatonError | null {
  try {
    cursors.decode(kind, cursor);
    return null;
  } catch (error) {
    return error as BatonError;
  }
}

describe('cursorCodec', () => {
  it('gives back the position it signed, for the kind it signed it for', () => {
    expect(cursors.decode('tasks', cursors.encode('tasks', TASK))).toBe(TASK);
    expect(cursors.decode('task_search', cursors.encode('task_search', `0.0607927 ${TASK} ${DIGEST}`))).toBe(`0.0607927 ${TASK} ${DIGEST}`);
    expect(cursors.decode('events', undefined)).toBeUndefined();
  });

  it('refuses another kind, another key, and the unsigned form of before', () => {
    expect(refusal('events', cursors.encode('tasks', TASK))).toMatchObject({ code: 'invalid_parameter' });
    expect(refusal('tasks', cursorCodec(new Uint8Array(32).fill(8)).encode('tasks', TASK))).toMatchObject({ code: 'invalid_parameter' });
    expect(refusal('tasks', cursors.encode('tasks', TASK).split('.')[0] ?? '')?.hint).toMatch(/first page/);
  });

  it('refuses a signed position SQL could not take: the signature is not the only guard', () => {
    for (const rank of ['1e400', 'NaN', 'Infinity', '-1', '3.5e38', '1e+-']) {
      expect(refusal('task_search', cursors.encode('task_search', `${rank} ${TASK} ${DIGEST}`)), rank).toMatchObject({ code: 'invalid_parameter' });
    }
    for (const seq of ['9223372036854775808', '99999999999999999999', '0', '-5', '1.5']) {
      expect(refusal('events', cursors.encode('events', seq)), seq).toMatchObject({ code: 'invalid_parameter' });
    }
    expect(cursors.decode('events', cursors.encode('events', '9223372036854775807'))).toBe('9223372036854775807');
    expect(cursors.decode('task_search', cursors.encode('task_search', `1e-07 ${TASK} ${DIGEST}`))).toBe(`1e-07 ${TASK} ${DIGEST}`);
  });

  it('refuses a signature spelt differently for the same bytes (base64url padding bits)', () => {
    const cursor = cursors.encode('tasks', TASK);
    const last = cursor.at(-1) ?? '';
    // The last of 22 base64url characters carries 2 bits of the tag and 4 unused ones.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[alphabet.indexOf(last) ^ 1] ?? '';
    expect(refusal('tasks', `${cursor.slice(0, -1)}${twin}`)).toMatchObject({ code: 'invalid_parameter' });
  });
});
