import { describe, expect, it } from 'vitest';
import { BatonError } from '../../errors.ts';
import { ifNoneMatchHits, parseIdempotencyKey, parseIfMatch } from './if-match.ts';

/** True when the parsed value could equal a resource version, or means "any version". */
function couldMatch(expected: number | undefined): boolean {
  return expected === undefined || (Number.isSafeInteger(expected) && expected >= 0);
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('parseIfMatch', () => {
  it('reads a strong tag as its version', () => {
    expect(parseIfMatch('"3"')).toBe(3);
    expect(parseIfMatch(' "42" ')).toBe(42);
  });

  it('treats absence and * as "any version"', () => {
    expect(parseIfMatch(undefined)).toBeUndefined();
    expect(parseIfMatch('*')).toBeUndefined();
  });

  it('never lets a weak tag match (strong comparison)', () => {
    expect(couldMatch(parseIfMatch('W/"3"'))).toBe(false);
  });

  it('never lets a well-formed tag that is not a version match', () => {
    expect(couldMatch(parseIfMatch('"abc"'))).toBe(false);
    expect(couldMatch(parseIfMatch('""'))).toBe(false);
  });

  it('refuses what is not an entity-tag with invalid_precondition', () => {
    for (const header of ['3', 'abc', '"3', '3"', 'W/3', "'3'", '']) {
      const error = thrown(() => parseIfMatch(header));
      expect(error, JSON.stringify(header)).toBeInstanceOf(BatonError);
      expect((error as BatonError).code).toBe('invalid_precondition');
      expect((error as BatonError).status).toBe(400);
    }
  });
});

describe('parseIdempotencyKey', () => {
  it('accepts the key bare or as a quoted string', () => {
    expect(parseIdempotencyKey('abc-123')).toBe('abc-123');
    expect(parseIdempotencyKey('"abc-123"')).toBe('abc-123');
    expect(parseIdempotencyKey('  abc-123 ')).toBe('abc-123');
  });

  it('is undefined when the header is absent', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it('keeps a lone quote as part of the key', () => {
    expect(parseIdempotencyKey('"abc')).toBe('"abc');
  });
});

describe('ifNoneMatchHits', () => {
  it('hits on the current version, in a list, or on *', () => {
    expect(ifNoneMatchHits('"3"', 3)).toBe(true);
    expect(ifNoneMatchHits('"1", "3"', 3)).toBe(true);
    expect(ifNoneMatchHits('*', 3)).toBe(true);
  });

  it('uses weak comparison, as RFC 9110 asks of If-None-Match', () => {
    expect(ifNoneMatchHits('W/"3"', 3)).toBe(true);
  });

  it('misses on another version or when absent', () => {
    expect(ifNoneMatchHits('"2"', 3)).toBe(false);
    expect(ifNoneMatchHits('"1", W/"2"', 3)).toBe(false);
    expect(ifNoneMatchHits('"33"', 3)).toBe(false);
    expect(ifNoneMatchHits(undefined, 3)).toBe(false);
  });
});
