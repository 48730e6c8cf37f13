/** A string (or object key) that no field may carry, with where it is and why. */
export interface TextIssue {
  readonly path: readonly (string | number)[];
  readonly detail: string;
}

/**
 * The one text rule every input passes before its schema: no string anywhere in it (values and
 * object keys, at any depth) may hold a NUL character or a lone UTF-16 surrogate. PostgreSQL text
 * and jsonb cannot store NUL, and a lone surrogate is not Unicode text, so either would otherwise
 * fail deep in the store as a retryable 500. Walking the raw input, rather than adding a check to
 * each field, means no present or future field can miss it.
 */
export function textIssues(value: unknown): TextIssue[] {
  const issues: TextIssue[] = [];
  // Iterative, with each entry linked to its parent, so a deeply nested body costs neither stack nor quadratic paths.
  const pending: Place[] = [{ value, key: undefined, parent: undefined }];
  for (let place = pending.pop(); place; place = pending.pop()) {
    const item = place.value;
    if (typeof item === 'string') {
      const detail = unsafeText(item);
      if (detail) issues.push({ path: pathOf(place), detail });
    } else if (Array.isArray(item)) {
      item.forEach((child: unknown, index) => pending.push({ value: child, key: index, parent: place }));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        const detail = unsafeText(key);
        if (detail) issues.push({ path: pathOf({ value: child, key, parent: place }), detail: `field name ${detail}` });
        else pending.push({ value: child, key, parent: place });
      }
    }
  }
  return issues;
}

interface Place {
  readonly value: unknown;
  readonly key: string | number | undefined;
  readonly parent: Place | undefined;
}

function pathOf(place: Place): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Place | undefined = place; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

/** Why `text` is refused, or undefined when it is fine. */
export function unsafeText(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000), which no field accepts';
  if (!text.isWellFormed()) return 'contains a lone UTF-16 surrogate (not valid Unicode), which no field accepts';
  return undefined;
}
