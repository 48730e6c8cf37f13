import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint } from './fingerprint.ts';

describe('canonicalJson', () => {
  it('sorts keys at every depth, inside arrays too', () => {
    const value = { b: 1, a: { d: [{ z: 1, y: { q: 2, p: 3 } }], c: null } };
    expect(canonicalJson(value)).toBe('{"a":{"c":null,"d":[{"y":{"p":3,"q":2},"z":1}]},"b":1}');
  });

  it('gives the same text for the same object built in another key order', () => {
    expect(canonicalJson({ title: 't', labels: ['x'], priority: 'high' })).toBe(canonicalJson({ priority: 'high', title: 't', labels: ['x'] }));
  });

  it('drops undefined members, as JSON does', () => {
    expect(canonicalJson({ a: 1, b: undefined, c: { d: undefined } })).toBe('{"a":1,"c":{}}');
  });

  it('keeps array order and writes undefined array items as null, as JSON does', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson(['b', 'a'])).not.toBe(canonicalJson(['a', 'b']));
    expect(canonicalJson([1, undefined, 2])).toBe(JSON.stringify([1, undefined, 2]));
  });

  it('writes scalars as JSON', () => {
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson(1.5)).toBe('1.5');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('sorts keys by code unit, not locale', () => {
    expect(canonicalJson({ b: 1, B: 2, a: 3, _: 4 })).toBe('{"B":2,"_":4,"a":3,"b":1}');
  });
});

describe('fingerprint', () => {
  it('is a SHA-256 that ignores key order', () => {
    const a = fingerprint('tasks_create', { title: 't', labels: ['x'] });
    expect(a).toHaveLength(32);
    expect(a.equals(fingerprint('tasks_create', { labels: ['x'], title: 't' }))).toBe(true);
  });

  it('differs when the operation or the input differs', () => {
    const a = fingerprint('tasks_create', { title: 't' });
    expect(a.equals(fingerprint('tasks_update', { title: 't' }))).toBe(false);
    expect(a.equals(fingerprint('tasks_create', { title: 'u' }))).toBe(false);
    expect(fingerprint('x', { l: [1, 2] }).equals(fingerprint('x', { l: [2, 1] }))).toBe(false);
  });
});
