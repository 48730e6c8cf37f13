import { describe, expect, it } from 'vitest';
import { type Held, hookScript, refusals } from './guard.ts';

const held = (id: string, holder: string, paths: string[], mode: Held['mode'] = 'exclusive'): Held => ({ id, paths, mode, holder: { id: holder, kind: 'agent' }, task_id: null, expires_at: '2026-01-01T00:00:00.000Z' });

describe('refusals', () => {
  const reservations = [held('res_1', 'agt_me', ['lib/**']), held('res_2', 'agt_other', ['src/**', 'README.md']), held('res_3', 'agt_other', ['docs/**'], 'shared'), held('res_4', 'agt_third', ['app/[id].tsx'])];

  it('refuses paths another holds exclusively, with the glob that covers them; not the caller\'s, not shared ones', () => {
    const found = refusals(['src/a.ts', 'src/.env', 'lib/x.ts', 'docs/guide.md', 'README.md', 'srcs/x.ts', 'app/[id].tsx'], reservations, 'agt_me');
    expect(found.map((r) => [r.path, r.glob, r.reservation_id])).toEqual([
      ['src/a.ts', 'src/**', 'res_2'],
      ['src/.env', 'src/**', 'res_2'],
      ['README.md', 'README.md', 'res_2'],
      ['app/[id].tsx', 'app/[id].tsx', 'res_4'],
    ]);
  });

  it('refuses nothing when nothing is reserved', () => {
    expect(refusals(['src/a.ts'], [], 'agt_me')).toEqual([]);
  });
});

describe('hookScript', () => {
  it('runs the check for its hook, with the command given', () => {
    expect(hookScript('pre-push', 'npx baton')).toMatch(/^#!\/bin\/sh\n[\s\S]*\nexec npx baton guard check --hook pre-push\n$/);
  });
});
