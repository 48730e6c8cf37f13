import { monotonicFactory } from 'ulidx';

export const ID_PREFIXES = ['tsk', 'evt', 'agt', 'tok', 'lea', 'apr', 'whk', 'dlv', 'art'] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

/** Makes prefixed ULIDs (`tsk_01J…`), monotonic within a millisecond in this process. */
export interface Ids {
  make(prefix: IdPrefix): string;
}

export function createIds(): Ids {
  const ulid = monotonicFactory();
  return { make: (prefix) => `${prefix}_${ulid()}` };
}

const ULID = '[0-7][0-9A-HJKMNP-TV-Z]{25}';
const patterns = new Map(ID_PREFIXES.map((p) => [p, new RegExp(`^${p}_${ULID}$`)]));

/** True when `value` is a well-formed id of the given kind. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return patterns.get(prefix)?.test(value) ?? false;
}

/** The regular expression source for an id of this kind, for JSON Schema `pattern`. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_${ULID}$`;
}
