import { describe, expect, it } from 'vitest';
import { nonPublic } from './webhook-destination.ts';

/** Every IPv6 form that carries an IPv4 address, in hex and (where it has one) dotted notation. */
const EMBEDDING: readonly { form: string; address: (v4: string, hex: string) => string }[] = [
  { form: 'IPv4-compatible, dotted', address: (v4) => `::${v4}` },
  { form: 'IPv4-compatible, hex', address: (_v4, hex) => `::${hex}` },
  { form: 'IPv4-mapped, dotted', address: (v4) => `::ffff:${v4}` },
  { form: 'IPv4-mapped, hex', address: (_v4, hex) => `::ffff:${hex}` },
  { form: 'IPv4-translated, dotted', address: (v4) => `::ffff:0:${v4}` },
  { form: 'IPv4-translated, hex', address: (_v4, hex) => `::ffff:0:${hex}` },
  { form: 'NAT64, dotted', address: (v4) => `64:ff9b::${v4}` },
  { form: 'NAT64, hex', address: (_v4, hex) => `64:ff9b::${hex}` },
  { form: '6to4', address: (_v4, hex) => `2002:${hex}::1` },
  { form: 'Teredo, hex', address: (v4) => `2001:0:4136:e378:8000:63bf:${teredoClient(v4, 'hex')}` },
  { form: 'Teredo, dotted', address: (v4) => `2001:0:4136:e378:8000:63bf:${teredoClient(v4, 'dotted')}` },
];

function hexOf(v4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Teredo keeps the client's address with every bit inverted. */
function teredoClient(v4: string, notation: 'hex' | 'dotted'): string {
  const inverted = v4.split('.').map((octet) => 255 - Number(octet));
  return notation === 'dotted' ? inverted.join('.') : hexOf(inverted.join('.'));
}

const NOT_PUBLIC: readonly [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['192.168.1.20', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['0.1.2.3', 'unspecified'],
];

describe('nonPublic', () => {
  for (const { form, address } of EMBEDDING) {
    it(`judges ${form} by the IPv4 address it embeds`, () => {
      for (const [v4, range] of NOT_PUBLIC) {
        const v6 = address(v4, hexOf(v4));
        expect(nonPublic(v6), v6).toBe(`which embeds ${v4}, a ${range} address`);
      }
      const publicV6 = address('8.8.8.8', hexOf('8.8.8.8'));
      expect(nonPublic(publicV6), publicV6).toBeNull();
    });
  }

  it('refuses the unspecified and loopback IPv6 addresses as such, and other special ranges by range', () => {
    expect(nonPublic('127.0.0.1')).toBe('a loopback address');
    expect(nonPublic('::')).toBe('a unspecified address');
    expect(nonPublic('::1')).toBe('a loopback address');
    expect(nonPublic('fe80::1%eth0')).toBe('a linkLocal address');
    expect(nonPublic('fd00::1')).toBe('a uniqueLocal address');
    expect(nonPublic('64:ff9b:1::a00:1')).toBe('a rfc6052 address');
    expect(nonPublic('2001:db8::1')).toBe('a reserved address');
  });

  it('accepts public unicast addresses of both families', () => {
    expect(nonPublic('8.8.8.8')).toBeNull();
    expect(nonPublic('2606:4700:4700::1111')).toBeNull();
  });
});
