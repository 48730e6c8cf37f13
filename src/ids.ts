import { monotonicFactory } from 'ulidx';

export const ID_PREFIXES = ['tsk', 'evt', 'agt', 'tok', 'lea', 'apr', 'whk', 'dlv', 'art', 'cmt', 'sch', 'ses', 'ask', 'inb', 'res', 'bdg', 'tpl', 'wsp', 'mct'] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

/** Makes prefixed ULIDs (`tsk_01J…`), monotonic within a millisecond in this process. */
export interface Ids {
  make(prefix: IdPrefix): string;
}

export function createIds(): Ids {
  const ulid = monotonicFactory(pooledRandom());
  return { make: (prefix) => `${prefix}_${ulid()}` };
}

/**
 * Uniform numbers in [0, 1) for the ULID's random part, drawn a byte at a time from a 4 KiB pool of
 * `crypto.getRandomValues`: ulidx's default asks the system for one byte per character, which cost
 * 5% of a write request's CPU (bench/run.ts --profile). ULIDs are identifiers, not secrets.
 */
function pooledRandom(): () => number {
  const pool = new Uint8Array(4096);
  let at = pool.length;
  return () => {
    if (at === pool.length) {
      crypto.getRandomValues(pool);
      at = 0;
    }
    return (pool[at++] ?? 0) / 256;
  };
}

/** A ULID's 26 characters: Crockford base32, the first at most 7 (48 bits of time). */
export const ULID = '[0-7][0-9A-HJKMNP-TV-Z]{25}';
const patterns = new Map(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}_${ULID}$`)]));

/** True when `value` is a well-formed id of the given kind. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return patterns.get(prefix)?.test(value) ?? false;
}

/** The regular expression source for an id of this kind, for JSON Schema `pattern`. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_${ULID}$`;
}
