/**
 * Keys to sets of values, where a key's lone value is held as itself and a `Set` is made only once
 * a key has two: an open stream's token and interest keys almost always have one follower each,
 * and 10,000 open streams are 10,000 one-value entries (a `Set` costs ~180 bytes). Values must not
 * themselves be `Set`s.
 */
export class MultiMap<K, V extends object> {
  readonly #entries = new Map<K, V | Set<V>>();

  get size(): number {
    return this.#entries.size;
  }

  add(key: K, value: V): void {
    const held = this.#entries.get(key);
    if (held === undefined) this.#entries.set(key, value);
    else if (held instanceof Set) held.add(value);
    else if (held !== value) this.#entries.set(key, new Set([held, value]));
  }

  /** Removes `value` from `key`; the key goes once it holds nothing. */
  delete(key: K, value: V): void {
    const held = this.#entries.get(key);
    if (held === value) this.#entries.delete(key);
    else if (held instanceof Set) {
      held.delete(value);
      if (held.size === 0) this.#entries.delete(key);
    }
  }

  /** The values of `key`, none if it holds nothing. */
  get(key: K): Iterable<V> {
    const held = this.#entries.get(key);
    if (held === undefined) return [];
    return held instanceof Set ? held : [held];
  }

  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }
}
