import { describe, expect, it } from 'vitest';
import { MultiMap } from './multi-map.ts';

describe('MultiMap', () => {
  it('holds a lone value, then a set, and forgets a key once it holds nothing', () => {
    const map = new MultiMap<string, { n: number }>();
    const [one, two] = [{ n: 1 }, { n: 2 }];
    map.add('k', one);
    map.add('k', one);
    expect([...map.get('k')]).toEqual([one]);
    map.add('k', two);
    expect([...map.get('k')]).toEqual([one, two]);
    map.delete('k', one);
    expect([...map.get('k')]).toEqual([two]);
    map.delete('k', { n: 2 });
    expect([...map.get('k')]).toEqual([two]);
    map.delete('k', two);
    expect([...map.get('k')]).toEqual([]);
    expect(map.size).toBe(0);
  });

  it('leaves a lone value alone when asked to delete another', () => {
    const map = new MultiMap<string, { n: number }>();
    const one = { n: 1 };
    map.add('k', one);
    map.delete('k', { n: 1 });
    map.delete('other', one);
    expect([...map.get('k')]).toEqual([one]);
    expect([...map.keys()]).toEqual(['k']);
  });
});
