import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRINCIPAL_KINDS, type PrincipalKind, SCOPES, type Scope } from '../../src/domain/scopes.ts';
import { operations } from '../../src/operations/index.ts';
import { generateToken } from '../../src/tokens.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { expectRefusedWithoutWrites, snapshot, whoami } from './helpers.ts';
import { type Fixtures, makeFixtures, operationRequests, sendOperation } from './operation-requests.ts';

/**
 * The authorization matrix, generated from the registry: every operation, through HTTP, refused
 * for a token missing its scope, outside the allowlist, revoked, unknown, malformed or absent —
 * each refusal writing nothing — and served once for a caller allowed to.
 */

let t: TestServer;
let fx: Fixtures;
let revokedToken: string;
/** `${kind} ${scope}` → a token of a principal holding every scope but that one. */
const missingOne = new Map<string, string>();

const unknownToken = generateToken();
const lastChar = unknownToken.at(-1) === 'A' ? 'B' : 'A';
/** Baton-shaped, but the checksum does not match. */
const badChecksumToken = unknownToken.slice(0, -1) + lastChar;

beforeAll(async () => {
  // The matrix sends a few hundred requests with the admin token: keep the rate limit out of the way.
  // No sweeper and no delivery loop: a lease lapsing or a webhook delivery failing meanwhile would
  // be a write that no request made, and "refused, writing nothing" compares snapshots.
  t = await startTestServer({ rateLimit: { limit: 100_000, windowS: 3600 }, sweepIntervalMs: 0, webhookIntervalMs: 0 });
  fx = await makeFixtures(t);
  const victim = await t.addPrincipal({ kind: 'human' });
  const res = await t.request('DELETE', `/api/v1/tokens/${(await whoami(t, victim.token)).token.id}`);
  expect(res.status, res.body).toBe(200);
  revokedToken = victim.token;
  for (const kind of PRINCIPAL_KINDS) {
    for (const scope of SCOPES) {
      const p = await t.addPrincipal({ kind, scopes: SCOPES.filter((s) => s !== scope) });
      missingOne.set(`${kind} ${scope}`, p.token);
    }
  }
});
afterAll(() => t.close());

describe('the matrix', () => {
  it('has a request for every registry operation, and none for an operation that is gone', () => {
    const names = operations.map((op) => op.name);
    expect(names.filter((n) => !(n in operationRequests)), 'add these to test/security/operation-requests.ts').toEqual([]);
    expect(Object.keys(operationRequests).filter((n) => !names.includes(n)), 'remove these from test/security/operation-requests.ts').toEqual([]);
  });

  it('shows the admin every operation as callable', async () => {
    expect((await whoami(t, t.adminToken)).can.sort()).toEqual(operations.map((op) => op.name).sort());
  });
});

for (const operation of operations) {
  describe(`${operation.name} (${operation.http.method} ${operation.http.path})`, () => {
    const build = operationRequests[operation.name];
    if (!build) {
      it('has a request in test/security/operation-requests.ts', () => {
        expect.fail(`${operation.name} has no request in test/security/operation-requests.ts: add one so the matrix covers it`);
      });
      return;
    }
    const send = (token: string | null) => sendOperation(t, operation, build(fx), token);
    const { scope } = operation;

    if (scope === null && operation.humanOnly === true) {
      // A person's own sessions (sessions_list, sessions_revoke): no scope, but for humans only.
      it('is refused to an agent, whatever its scopes: 403 human_required', async () => {
        const p = await t.addPrincipal({ kind: 'agent' });
        await expectRefusedWithoutWrites(t, () => send(p.token), 403, 'human_required', { keyRemembered: operation.kind === 'write' });
      });
    } else if (scope === null) {
      it.each(PRINCIPAL_KINDS)('is open to a %s token with no scopes, or an allowlist that leaves it out', async (kind) => {
        for (const options of [{ scopes: [] }, { allowlist: ['tasks_get'] }, { scopes: [] as Scope[], allowlist: ['tasks_get'] }]) {
          const p = await t.addPrincipal({ kind, ...options });
          const res = await send(p.token);
          expect(res.status, res.body).toBe(200);
          expect(res.json<{ principal: { id: string } }>().principal.id).toBe(p.id);
        }
      });
    } else {
      it.each(PRINCIPAL_KINDS)(`refuses a %s token missing exactly ${scope}: 403 forbidden_scope naming it`, async (kind: PrincipalKind) => {
        const token = missingOne.get(`${kind} ${scope}`) ?? '';
        const problem = await expectRefusedWithoutWrites(t, () => send(token), 403, 'forbidden_scope');
        expect(problem.required_scope).toBe(scope);
        expect(problem.detail).toContain(scope);
        expect((await whoami(t, token)).can).not.toContain(operation.name);
      });

      it.each(PRINCIPAL_KINDS)('refuses a %s with every scope whose allowlist leaves it out: 403 tool_not_allowed', async (kind: PrincipalKind) => {
        const allowlist = operations.map((op) => op.name).filter((n) => n !== operation.name);
        const p = await t.addPrincipal({ kind, allowlist });
        await expectRefusedWithoutWrites(t, () => send(p.token), 403, 'tool_not_allowed');
        expect((await whoami(t, p.token)).can).not.toContain(operation.name);
      });
    }

    it('refuses a revoked, an unknown and a malformed token: 401 invalid_token', async () => {
      for (const token of [revokedToken, unknownToken, badChecksumToken, 'bat_short', 'not-a-baton-token']) {
        await expectRefusedWithoutWrites(t, () => send(token), 401, 'invalid_token');
      }
    });

    it('refuses a call without a token, or with another scheme: 401 unauthenticated', async () => {
      await expectRefusedWithoutWrites(t, () => send(null), 401, 'unauthenticated');
      const basic = `Basic ${Buffer.from(`admin:${t.adminToken}`).toString('base64')}`;
      await expectRefusedWithoutWrites(t, () => sendOperation(t, operation, build(fx), null, { authorization: basic }), 401, 'unauthenticated');
    });

    it(`runs once for a caller allowed to: ${operation.http.successStatus ?? 200}`, async () => {
      const fresh = await makeFixtures(t);
      const before = await snapshot(t.database.db);
      if (operation.kind === 'stream') {
        // A stream never ends: take its head, then hang up.
        const res = await t.app.inject({ method: 'GET', url: `/api/v1${operation.http.path}?${build(fresh).query ?? ''}`, headers: { authorization: `Bearer ${t.adminToken}` }, payloadAsStream: true });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toContain('text/event-stream');
        res.stream().destroy();
        expect(await snapshot(t.database.db)).toEqual(before);
        return;
      }
      const res = await sendOperation(t, operation, build(fresh), t.adminToken);
      expect(res.status, res.body).toBe(operation.http.successStatus ?? 200);
      const after = await snapshot(t.database.db);
      // Also proves the snapshot sees writes, so "unchanged" above means something.
      if (operation.kind === 'write') expect(after).not.toEqual(before);
      else expect(after).toEqual(before);
    });

    if (operation.approval !== 'none' && operation.approvalWaived === undefined) {
      it(`is gated (${operation.approval}): an agent, or a human without approvals:decide, gets 202 and a pending approval`, async () => {
        const agent = await t.addPrincipal({ kind: 'agent' });
        for (const token of [agent.token, missingOne.get('human approvals:decide') ?? '']) {
          const fresh = await makeFixtures(t);
          const res = await sendOperation(t, operation, build(fresh), token);
          expect(res.status, res.body).toBe(202);
          const approval = res.json<{ id: string; status: string; operation: string }>();
          expect(approval).toMatchObject({ status: 'pending', operation: operation.name });
          const read = await t.request('GET', `/api/v1/approvals/${approval.id}`, { token });
          expect(read.status, read.body).toBe(200);
        }
      });
    }
    if (operation.approvalWaived !== undefined) {
      // Its owner (or an agents:admin) acts alone; to anyone else the object does not exist, so no
      // approval can be asked on it (issue 36 item 5: a 202 told a real id from a made-up one).
      it('is absent (404) to a caller who is neither its owner nor an agents:admin, and writes nothing', async () => {
        const agent = await t.addPrincipal({ kind: 'agent', scopes: SCOPES.filter((s) => s !== 'agents:admin') });
        const human = await t.addPrincipal({ kind: 'human', scopes: SCOPES.filter((s) => s !== 'agents:admin' && s !== 'approvals:decide') });
        for (const token of [agent.token, human.token]) {
          const fresh = await makeFixtures(t);
          // The key remembers its answer, as for any refusal past authentication.
          await expectRefusedWithoutWrites(t, () => sendOperation(t, operation, build(fresh), token), 404, 'not_found', { keyRemembered: true });
        }
      });
    }
  });
}
