import { describe, expect, it } from 'vitest';
import { findCycle } from './task-graph.ts';

describe('findCycle', () => {
  it('names the cycle a new edge would close, each task blocked by the next', () => {
    // b waits on c, c waits on a: making a wait on b closes a → b → c → a.
    const edges = new Map([['b', ['c']], ['c', ['a']]]);
    expect(findCycle('a', ['b'], edges)).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle('a', ['c'], edges)).toEqual(['a', 'c', 'a']);
  });

  it('finds none when the task is not upstream of its new blockers', () => {
    const edges = new Map([['b', ['c']], ['c', ['d']], ['x', ['a']]]);
    expect(findCycle('a', ['b'], edges)).toBeUndefined();
    expect(findCycle('a', [], edges)).toBeUndefined();
  });

  it('picks a shortest cycle through diamonds, visiting each task once', () => {
    const edges = new Map([['b', ['c', 'd']], ['c', ['e']], ['d', ['a']], ['e', ['a']], ['f', ['a']]]);
    expect(findCycle('a', ['f', 'b'], edges)).toEqual(['a', 'f', 'a']);
    expect(findCycle('a', ['b'], edges)).toEqual(['a', 'b', 'd', 'a']);
  });

  it('ends on a graph that already has a cycle elsewhere', () => {
    const edges = new Map([['b', ['c']], ['c', ['b']]]);
    expect(findCycle('a', ['b'], edges)).toBeUndefined();
  });
});
