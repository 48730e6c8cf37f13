import { describe, expect, it } from 'vitest';
import { cliHint } from './hints.ts';

describe('cliHint', () => {
  it('names the command where the CLI has one for the route, the id kept', () => {
    expect(cliHint('List tasks with GET /api/v1/tasks to find existing ids.')).toBe('List tasks with `baton tasks list` to find existing ids.');
    expect(cliHint('Claim it: POST /api/v1/tasks/tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV/claim.')).toBe('Claim it: `baton tasks claim tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV`.');
    expect(cliHint('claim the next task with POST /api/v1/tasks/claim instead.')).toBe('claim the next task with `baton tasks claim` instead.');
    expect(cliHint('revoke the old one (DELETE /api/v1/tokens/{id})')).toBe('revoke the old one (`baton tokens revoke <id>`)');
    expect(cliHint('retry with the same Idempotency-Key.')).toBe('retry with the same `--idempotency-key`.');
  });

  it('leaves a route without a command, or with a query, as REST wrote it', () => {
    for (const hint of ['GET /api/v1/leases?holder=me&state=active lists the leases you hold.', 'GET /api/v1/tasks?blocked_reason=attempts_exhausted lists them.', 'Read it (GET /api/v1/approvals/{id}).']) {
      expect(cliHint(hint)).toBe(hint);
    }
  });
});
