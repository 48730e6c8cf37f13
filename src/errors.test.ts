import { describe, expect, it } from 'vitest';
import { BatonError, type Dialect, hintReferences, renderHint, toBatonError, toProblem } from './errors.ts';

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

describe('renderHint', () => {
  const dialect: Dialect = {
    call: (operation, args) => `<${operation}${Object.entries(args).map(([k, v]) => ` ${k}:${v}`).join('')}>`,
    idempotencyKey: 'KEY',
    expectedVersion: 'VERSION',
    schema: 'SCHEMA',
    fieldLocations: false,
    retryAfter: 'WAIT',
  };

  it('words each reference, with its arguments, for the interface; the rest of the text stays', () => {
    const hint = 'List with [[leases_list holder=me state=active]], claim with [[tasks_claim_next]]; after [[Retry-After]] seconds, retry with the same [[Idempotency-Key]] and [[If-Match]] (see [[schema]]).';
    expect(renderHint(hint, dialect)).toBe('List with <leases_list holder:me state:active>, claim with <tasks_claim_next>; after WAIT seconds, retry with the same KEY and VERSION (see SCHEMA).');
    expect(hintReferences(hint)).toEqual(['leases_list', 'tasks_claim_next']);
  });

  it('drops the HTTP location of field errors where the interface has none', () => {
    const error = new BatonError('invalid_parameter', 'limit is too big.', { extra: { errors: [{ pointer: '/limit', detail: 'at most 100', location: 'query' }] } });
    expect(toProblem(error, 'http://baton.test', dialect).errors).toEqual([{ pointer: '/limit', detail: 'at most 100' }]);
    expect(toProblem(error, 'http://baton.test', { ...dialect, fieldLocations: true }).errors).toEqual([{ pointer: '/limit', detail: 'at most 100', location: 'query' }]);
  });

  it('carries the Retry-After header\'s seconds as retry_after_s, for interfaces without headers', () => {
    const busy = new BatonError('unavailable', 'The database did not answer.', { headers: { 'retry-after': '1' } });
    expect(toProblem(busy, 'http://baton.test', dialect)).toMatchObject({ code: 'unavailable', retry_after_s: 1 });
    expect(toProblem(new BatonError('not_found', 'No task tsk_x.'), 'http://baton.test', dialect)).not.toHaveProperty('retry_after_s');
  });
});
