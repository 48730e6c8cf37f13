import { describe, expect, it } from 'vitest';
import { checkTemplate, renderTasks, resolveParameters, substitute, type TemplateTask } from './templates.ts';

const task = (key: string, extra: Partial<TemplateTask> = {}): TemplateTask => ({ key, title: key, description: '', priority: 'normal', labels: [], blocked_by: [], approval: false, ...extra });
const limits = { depth: 8, chain: 32 };

describe('templates', () => {
  it('substitutes names only, once: a value holding a placeholder stays as given', () => {
    expect(substitute('Ship {{v}} to {{ env }}', { v: '1.0', env: 'prod' })).toBe('Ship 1.0 to prod');
    expect(substitute('{{v}}', { v: '{{env}}', env: 'prod' })).toBe('{{env}}');
    expect(substitute('{{ process.exit() }} {{Name}} {{', { v: 1 })).toBe('{{ process.exit() }} {{Name}} {{');
  });

  it('names the shortest cycle among blockers, and among parents', () => {
    const [loop] = checkTemplate([], [task('a', { blocked_by: ['b'] }), task('b', { blocked_by: ['c'] }), task('c', { blocked_by: ['a'] })], limits);
    expect(loop).toMatchObject({ kind: 'blocked_by_cycle', cycle: ['a', 'b', 'c', 'a'] });
    const [tree] = checkTemplate([], [task('a', { parent: 'b' }), task('b', { parent: 'a' })], limits);
    expect(tree).toMatchObject({ kind: 'parent_cycle', cycle: ['a', 'b', 'a'] });
  });

  it('bounds the depth of the subtask tree and of blocker chains', () => {
    const chain = Array.from({ length: 33 }, (_, i) => task(`t${i}`, i > 0 ? { blocked_by: [`t${i - 1}`] } : {}));
    expect(checkTemplate([], chain, limits)).toMatchObject([{ kind: 'blocked_by_too_deep' }]);
    const deep = Array.from({ length: 9 }, (_, i) => task(`t${i}`, i > 0 ? { parent: `t${i - 1}` } : {}));
    expect(checkTemplate([], deep, limits)).toMatchObject([{ kind: 'parent_too_deep' }]);
  });

  it('checks declarations: enum values, defaults of the right type, repeated names', () => {
    const issues = checkTemplate(
      [
        { name: 'e', type: 'enum', required: true },
        { name: 'n', type: 'number', required: true, default: 'x' },
        { name: 'n', type: 'string', required: true },
      ],
      [task('a')],
      limits,
    );
    expect(issues.map((i) => i.pointer)).toEqual(['/parameters/0/values', '/parameters/1/default', '/parameters/2/name']);
  });

  it('resolves values: defaults, numbers from text, unknown and missing names', () => {
    const declared = [
      { name: 'v', type: 'string' as const, required: true },
      { name: 'n', type: 'number' as const, required: true, default: 2 },
      { name: 'o', type: 'string' as const, required: false },
    ];
    expect(resolveParameters(declared, { v: 'x', n: '7' })).toEqual({ values: { v: 'x', n: 7, o: '' }, issues: [] });
    expect(resolveParameters(declared, { z: 1 }).issues.map((i) => i.pointer)).toEqual(['/params/z', '/params/v']);
  });

  it('orders parents and blockers before the tasks that name them', () => {
    const order = renderTasks([task('c', { parent: 'b', blocked_by: ['a'] }), task('b'), task('a')], {}).map((t) => t.key);
    expect(order).toEqual(['b', 'a', 'c']);
  });
});
