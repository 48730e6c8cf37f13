import { describe, expect, it } from 'vitest';
import { generateToken, hashToken, isWellFormedToken, tokenPrefix } from './tokens.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The same token with the character at `index` replaced by a different base62 character. */
function mutate(token: string, index: number): string {
  const current = token[index] ?? '';
  const next = BASE62[(BASE62.indexOf(current) + 1) % BASE62.length] ?? '';
  return token.slice(0, index) + next + token.slice(index + 1);
}

describe('generateToken', () => {
  it('makes bat_ + 36 base62 characters that pass the checksum', () => {
    for (let i = 0; i < 50; i++) {
      const token = generateToken();
      expect(token).toMatch(/^bat_[0-9A-Za-z]{36}$/);
      expect(isWellFormedToken(token)).toBe(true);
    }
  });

  it('never repeats', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => generateToken()));
    expect(tokens.size).toBe(200);
  });
});

describe('isWellFormedToken', () => {
  const token = generateToken();

  it('refuses any one-character change, in the body or in the checksum', () => {
    for (let i = 4; i < token.length; i++) {
      const changed = mutate(token, i);
      expect(changed).not.toBe(token);
      expect(isWellFormedToken(changed), `position ${i}`).toBe(false);
    }
  });

  it('refuses another prefix', () => {
    const body = token.slice(4);
    for (const prefix of ['ghp_', 'BAT_', 'bat-', 'bt_', 'bat__', '']) expect(isWellFormedToken(prefix + body), prefix).toBe(false);
  });

  it('refuses a token one character short or long', () => {
    expect(isWellFormedToken(token.slice(0, -1))).toBe(false);
    expect(isWellFormedToken(`${token}0`)).toBe(false);
    expect(isWellFormedToken(`${token.slice(0, 4)}0${token.slice(4)}`)).toBe(false);
  });

  it('refuses characters outside base62 and surrounding whitespace', () => {
    expect(isWellFormedToken(`${token.slice(0, 10)}-${token.slice(11)}`)).toBe(false);
    expect(isWellFormedToken(` ${token}`)).toBe(false);
    expect(isWellFormedToken(`${token}\n`)).toBe(false);
    expect(isWellFormedToken('')).toBe(false);
  });
});

describe('hashToken', () => {
  it('is SHA-256: 32 bytes, matching a known vector', () => {
    const hash = hashToken('abc');
    expect(hash).toHaveLength(32);
    expect(hash.toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('is deterministic and tells tokens apart', () => {
    const a = generateToken();
    const b = generateToken();
    expect(hashToken(a).equals(hashToken(a))).toBe(true);
    expect(hashToken(a).equals(hashToken(b))).toBe(false);
  });
});

describe('tokenPrefix', () => {
  it('shows bat_ and four characters, never the whole secret', () => {
    const token = generateToken();
    expect(tokenPrefix(token)).toBe(token.slice(0, 8));
    expect(tokenPrefix(token)).toMatch(/^bat_[0-9A-Za-z]{4}$/);
  });
});
