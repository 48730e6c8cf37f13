import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Problem } from '../api.ts';
import { type BulkItem, type BulkOutcome, type BulkRequest, runBulk, type Selection } from '../bulk.ts';
import { RichText } from '../components.tsx';
import '../bulk-inbox.css';

/** What a bulk action did, item by item. */
export interface BulkReport {
  action: string;
  outcomes: BulkOutcome[];
}

/**
 * Runs bulk actions over a selection: one request per item (see `runBulk`), the report of the last
 * run, and the selection left with the refused items only, so they can be tried again. `run`
 * resolves to the outcomes; `show` shows a report of outcomes gathered elsewhere (an undo's).
 */
export function useBulk(selection: Selection, onDone?: (outcomes: BulkOutcome[]) => void) {
  const [busy, setBusy] = useState(false);
  const [report, setReport] = useState<BulkReport | null>(null);
  const run = async (action: string, items: BulkItem[], request: (item: BulkItem) => BulkRequest | Problem) => {
    if (items.length === 0) return [];
    setBusy(true);
    setReport(null);
    try {
      const outcomes = await runBulk(items, request);
      setReport({ action, outcomes });
      selection.set(outcomes.filter((o) => o.problem !== null).map((o) => o.id));
      onDone?.(outcomes);
      return outcomes;
    } finally {
      setBusy(false);
    }
  };
  return { busy, report, run, show: setReport, dismiss: () => setReport(null) };
}

/** The outcome of a bulk action: how many were done and refused, then each item with its result and, if refused, why. */
export function BulkResults({ report, onDismiss }: { report: BulkReport; onDismiss: () => void }) {
  const refused = report.outcomes.filter((o) => o.problem !== null).length;
  const done = report.outcomes.length - refused;
  return (
    <div class={`notice bulk-report ${refused > 0 ? 'notice-problem' : 'notice-approved'}`} role="status" data-testid="bulk-report">
      <div class="notice-body">
        <strong class="notice-title">
          {report.action}: {done} done{refused > 0 ? `, ${refused} refused` : ''}.
        </strong>
        <ul class="bulk-outcomes">
          {report.outcomes.map((o) => (
            <li key={o.id} data-outcome={o.problem ? 'refused' : 'done'} data-item={o.id}>
              <span class="bulk-mark">{o.problem ? 'Refused' : 'Done'}</span> {o.label}
              {o.problem && (
                <span class="bulk-why">
                  : {o.problem.title}
                  {o.problem.detail && (
                    <>
                      {' '}
                      (<RichText text={o.problem.detail} />)
                    </>
                  )}
                </span>
              )}
            </li>
          ))}
        </ul>
      </div>
      <button type="button" class="button-quiet" onClick={onDismiss} aria-label="Dismiss the results">
        ✕
      </button>
    </div>
  );
}

/**
 * The bar over a multi-selection: how many are selected, "Select all N matching", Clear, and the
 * page's actions (children). Shown while something is selected.
 */
export function BulkBar({ selection, matching, noun, busy, children }: { selection: Selection; matching: readonly string[]; noun: string; busy: boolean; children: ComponentChildren }) {
  const count = selection.selected.size;
  if (count === 0) return null;
  return (
    <div class="bulk-bar" role="region" aria-label="Bulk actions" aria-busy={busy}>
      <p class="bulk-count" aria-live="polite">
        {count} {noun}
        {count === 1 ? '' : 's'} selected
      </p>
      {matching.length > count && (
        <button type="button" class="button-quiet" onClick={() => selection.set(matching)}>
          Select all {matching.length} matching
        </button>
      )}
      <button type="button" class="button-quiet" onClick={selection.clear}>
        Clear selection
      </button>
      <div class="bulk-actions">{children}</div>
    </div>
  );
}

/** What a card needs to be selectable: the selection and the order shift-click ranges over. */
export interface CardSelect {
  selection: Selection;
  order: () => readonly string[];
}

/** The checkbox that selects one item: a click toggles it, a shift-click selects the range from the last one clicked. */
export function SelectBox({ id, label, selection, order }: { id: string; label: string; selection: Selection; order: () => readonly string[] }) {
  return (
    <input
      type="checkbox"
      class="select-box"
      aria-label={`Select ${label}`}
      checked={selection.selected.has(id)}
      onClick={(e) => selection.toggle(id, order(), e.shiftKey)}
    />
  );
}
