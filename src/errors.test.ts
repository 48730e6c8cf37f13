import { describe, expect, it } from 'vitest';
import { toBatonError } from './errors.ts';

/** An error as the `pg` driver raises it for a SQLSTATE. */
function databaseError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('toBatonError', () => {
  it('makes a deadlock or a serialization failure a retryable write_contention (503, Retry-After)', () => {
    for (const code of ['40P01', '40001']) {
      const error = toBatonError(databaseError(code, 'deadlock detected'));
      expect([error.code, error.status, error.retryable, error.headers['retry-after']]).toEqual(['write_contention', 503, true, '1']);
    }
  });

  it('makes a lost connection unavailable and anything else internal, without the message', () => {
    expect(toBatonError(databaseError('57P01', 'terminating connection due to administrator command')).code).toBe('unavailable');
    const internal = toBatonError(databaseError('23502', 'null value in column "title" violates not-null constraint'));
    expect([internal.code, internal.status]).toEqual(['internal', 500]);
    expect(internal.detail).not.toContain('title');
  });
});
