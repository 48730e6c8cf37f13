import { hash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const TOKEN = /^bat_([0-9A-Za-z]{30})([0-9A-Za-z]{6})$/;

/**
 * Makes a bearer token: `bat_` + 30 random base62 characters + a 6-character base62 CRC32 of them
 * (GitHub's `ghp_` design): a mistyped token is refused without a query, and secret scanners can
 * match the prefix.
 */
export function generateToken(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += BASE62[randomInt(62)];
  return `bat_${body}${checksum(body)}`;
}

/** True when the token has Baton's shape and its checksum matches. Costs no I/O. */
export function isWellFormedToken(token: string): boolean {
  const match = TOKEN.exec(token);
  return match !== null && checksum(match[1] ?? '') === match[2];
}

/** The stored form of a token. SHA-256 suffices: tokens carry 178 bits of entropy, so no stretching is needed. */
export function hashToken(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

/** The part of a token safe to show in lists (`bat_AbC1…`). */
export function tokenPrefix(token: string): string {
  return token.slice(0, 8);
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}
