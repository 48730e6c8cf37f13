import { describe, expect, it } from 'vitest';
import { globProblem, globsOverlap, overlappingGlobs } from './globs.ts';

describe('globsOverlap', () => {
  it.each([
    ['src/**', 'src/a.ts', true],
    ['src/a.ts', 'src/**', true],
    ['src/**', 'src/.env', true],
    ['src/*.ts', 'src/a/b.ts', false],
    ['src/*.ts', 'docs/**', false],
    ['src/**', 'src/lib/*.ts', true],
    ['src/lib/**', 'src/**/*.test.ts', true],
    ['**', 'docs/readme.md', true],
    ['**/*.md', 'src/**', true],
    ['src/a.ts', 'src/a.ts', true],
    ['src/a.ts', 'src/b.ts', false],
    ['src/{a,b}.ts', 'src/b.ts', true],
    ['src/{a,b}.ts', 'src/c.ts', false],
    ['docs/*', 'docsx/**', false],
    ['src/*.ts', 'src/*.md', true], // conservative: same literal prefix
  ])('%s and %s: %s', (a, b, expected) => {
    expect(globsOverlap(a, b)).toBe(expected);
    expect(globsOverlap(b, a)).toBe(expected);
  });

  it('lists the overlapping pairs', () => {
    expect(overlappingGlobs(['src/**', 'README.md'], ['docs/**', 'src/a.ts', 'README.md'])).toEqual([
      ['src/**', 'src/a.ts'],
      ['README.md', 'README.md'],
    ]);
  });
});

describe('globProblem', () => {
  it('refuses absolute, backslashed and dotted paths', () => {
    expect(globProblem('src/**')).toBeNull();
    expect(globProblem('/etc/passwd')).not.toBeNull();
    expect(globProblem('src\\a.ts')).not.toBeNull();
    expect(globProblem('src/../secrets')).not.toBeNull();
    expect(globProblem('src//a')).not.toBeNull();
  });
});
