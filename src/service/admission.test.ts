import { describe, expect, it } from 'vitest';
import { CLAIMS_SHED_AT, CLAIMS_SHED_FLOOR, OTHERS_SHED_AT, OTHERS_SHED_FLOOR, shedding } from './admission.ts';

describe('load shedding', () => {
  const pool = (waiting: number) => ({ size: 10, waiting });

  it('lets every call in while fewer calls wait than the claims mark', () => {
    for (const name of ['tasks_claim', 'tasks_claim_next', 'tasks_create', 'leases_heartbeat', 'mcp']) expect(shedding(name, pool(10 * CLAIMS_SHED_AT - 1))).toBeUndefined();
  });

  it('refuses claims first, as retryable 503s with a longer Retry-After', () => {
    for (const name of ['tasks_claim', 'tasks_claim_next']) {
      const refused = shedding(name, pool(10 * CLAIMS_SHED_AT));
      expect(refused?.code).toBe('unavailable');
      expect(refused?.status).toBe(503);
      expect(refused?.retryable).toBe(true);
      expect(refused?.headers['retry-after']).toBe('5');
      expect(refused?.detail).toContain('40 calls are waiting');
    }
    expect(shedding('tasks_create', pool(10 * CLAIMS_SHED_AT))).toBeUndefined();
  });

  it('refuses every other call at the higher mark, and never a renewal', () => {
    expect(shedding('tasks_create', pool(10 * OTHERS_SHED_AT - 1))).toBeUndefined();
    expect(shedding('tasks_create', pool(10 * OTHERS_SHED_AT))?.headers['retry-after']).toBe('2');
    expect(shedding('graphql', pool(10 * OTHERS_SHED_AT))?.status).toBe(503);
    expect(shedding('leases_heartbeat', pool(100_000))).toBeUndefined();
    expect(shedding('reservations_heartbeat', pool(100_000))).toBeUndefined();
  });

  it('never sheds below the default pool\'s marks, however small the pool', () => {
    const one = (waiting: number) => ({ size: 1, waiting });
    expect(shedding('tasks_claim', one(CLAIMS_SHED_FLOOR - 1))).toBeUndefined();
    expect(shedding('tasks_claim', one(CLAIMS_SHED_FLOOR))?.status).toBe(503);
    expect(shedding('tasks_create', one(OTHERS_SHED_FLOOR - 1))).toBeUndefined();
    expect(shedding('tasks_create', one(OTHERS_SHED_FLOOR))?.status).toBe(503);
    // A large pool sheds by its own size.
    expect(shedding('tasks_claim', { size: 50, waiting: 50 * CLAIMS_SHED_AT - 1 })).toBeUndefined();
  });
});
