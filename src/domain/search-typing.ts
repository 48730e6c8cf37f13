/**
 * Search as you type (spec/collaboration.md, "Search"): the word a search text ends with, when it
 * is a plain word (letters and digits, not inside a quoted phrase, not excluded with `-`, not the
 * `or` operator), split from the text before it, so the store can also match it as the start of a
 * longer word: "staging datab" finds "staging database" while the last word is still being typed.
 * Null when the text ends otherwise (a space, a closing quote, punctuation) or its last word is
 * shorter than PREFIX_MIN: then every word is whole.
 */
/** The fewest characters a word is matched by as the start of a longer one. */
export const PREFIX_MIN = 3;

export function trailingWord(q: string): { before: string; word: string } | null {
  const match = /(?:^|\s)([\p{L}\p{N}]+)$/u.exec(q);
  const word = match?.[1];
  // One or two letters would start too many words to rank them all (every task with an "s…" word).
  if (word === undefined || [...word].length < PREFIX_MIN || word.toLowerCase() === 'or') return null;
  const before = q.slice(0, q.length - word.length);
  // After an odd number of quotes the word is inside a phrase, which matches whole words only.
  if ((before.match(/"/g)?.length ?? 0) % 2 === 1) return null;
  return { before, word };
}
