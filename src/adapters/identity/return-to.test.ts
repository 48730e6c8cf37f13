import { describe, expect, it } from 'vitest';
import { safeReturnTo } from './return-to.ts';

const base = 'https://baton.example.com';

describe('safeReturnTo', () => {
  it('keeps a path on this server', () => {
    expect(safeReturnTo('/tasks/tsk_1?tab=events#c', base)).toBe('/tasks/tsk_1?tab=events#c');
    expect(safeReturnTo(undefined, base)).toBe('/');
  });

  it.each(['https://evil.example/', '//evil.example/x', '/.//evil.example', '/a/..//evil.example', '/%2e%2e//evil.example', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)', '/%0d%0aSet-Cookie:x', 'evil', '/\u0009/evil.example', ['/a']])(
    'refuses %j',
    (value) => {
      if (value === '/%0d%0aSet-Cookie:x') {
        // Percent-encoded stays encoded: a harmless path on this server.
        expect(safeReturnTo(value, base)).toBe(value);
        return;
      }
      expect(() => safeReturnTo(value, base)).toThrow(/return_to/);
    },
  );
});
