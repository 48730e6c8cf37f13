import { useState } from 'preact/hooks';
import type { CallName } from '../../src/client/index.ts';
import type { AnyWrite } from './action.ts';
import { call, newKey, type Problem, problemOf } from './api.ts';

/** One item of a bulk action: its id and what the user calls it. */
export interface BulkItem {
  id: string;
  label: string;
}

/** The one request a bulk action sends for an item (the operation an agent would call for it alone). */
export type BulkRequest = AnyWrite & {
  /** The Idempotency-Key, when chosen before (an undo's, fixed when its toast is shown); otherwise a fresh one. */
  key?: string;
};

/** How one item fared: done (with the server's answer), or refused with the server's problem. */
export interface BulkOutcome extends BulkItem {
  problem: Problem | null;
  result?: unknown;
}

/** Requests in flight at once: enough to be quick, few enough to stay under a token's rate limit. */
const BULK_CONCURRENCY = 4;

/**
 * Sends one request per item, each with its own Idempotency-Key (a lost answer is retried under
 * the same key by the client, so nothing applies twice), at most `concurrency` at a time. A refusal
 * stops nothing else: every item's outcome is returned, in the items' order. `request` may answer
 * a problem instead of a request to skip an item without sending anything.
 */
export async function runBulk(items: readonly BulkItem[], request: (item: BulkItem) => BulkRequest | Problem, concurrency = BULK_CONCURRENCY): Promise<BulkOutcome[]> {
  const outcomes: BulkOutcome[] = items.map((item) => ({ ...item, problem: null }));
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      const item = items[at];
      const outcome = outcomes[at];
      if (!item || !outcome) continue;
      const sent = request(item);
      if (!('input' in sent)) {
        outcome.problem = sent;
        continue;
      }
      try {
        outcome.result = await call<CallName>(sent.operation, sent.input, { key: sent.key ?? newKey(), ...(sent.ifMatch === undefined ? {} : { ifMatch: sent.ifMatch }) });
      } catch (error) {
        outcome.problem = problemOf(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return outcomes;
}

/**
 * A multi-selection over a list shown in `order`: click toggles one, shift-click selects the range
 * from the last clicked, `toggle` without a range serves `x` on the focused item.
 */
export function useSelection() {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<string | null>(null);
  const toggle = (id: string, order: readonly string[], range = false) => {
    const from = anchor === null ? -1 : order.indexOf(anchor);
    const to = order.indexOf(id);
    const next = new Set(selected);
    if (range && from >= 0 && to >= 0) {
      // A range takes the state of the item the range starts from.
      const on = selected.has(anchor ?? '');
      for (const each of order.slice(Math.min(from, to), Math.max(from, to) + 1)) {
        if (on) next.add(each);
        else next.delete(each);
      }
    } else if (next.has(id)) next.delete(id);
    else next.add(id);
    setAnchor(id);
    setSelected(next);
  };
  return {
    selected,
    toggle,
    set: (ids: Iterable<string>) => setSelected(new Set(ids)),
    clear: () => {
      setSelected(new Set());
      setAnchor(null);
    },
  };
}
export type Selection = ReturnType<typeof useSelection>;

/** The id in `attribute` of the item that holds the focus (what `x` toggles), or null. */
export function focusedItem(attribute: string): string | null {
  return document.activeElement?.closest(`[${attribute}]`)?.getAttribute(attribute) ?? null;
}
