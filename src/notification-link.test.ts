import { describe, expect, it } from 'vitest';
import { linkKey, newLinkId, readLink, signLink } from './notification-link.ts';

const key = linkKey(new Uint8Array(32).fill(7));
const claims = { id: newLinkId(), to: 'agt_1', task: 'tsk_1', item: 'inb_1', ask: 'ask_1', option: 1, exp: 1_900_000_000 };

describe('notification links', () => {
  it('reads back what it signed', () => {
    expect(readLink(key, signLink(key, claims))).toEqual(claims);
  });

  it('refuses a link altered, signed with another key, or malformed', () => {
    const token = signLink(key, claims);
    const [body, signature] = token.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...claims, to: 'agt_2' })).toString('base64url');
    expect(readLink(key, `${forged}.${signature}`)).toBeUndefined();
    expect(readLink(linkKey(new Uint8Array(32).fill(8)), token)).toBeUndefined();
    expect(readLink(key, body)).toBeUndefined();
    expect(readLink(key, `${token}.x`)).toBeUndefined();
    expect(readLink(key, '')).toBeUndefined();
  });

  it('gives every link its own id', () => {
    expect(newLinkId()).not.toBe(newLinkId());
  });
});
