import { STATUS_LABEL } from '../format.ts';
import type { Status } from '../types.ts';

/** The id of the board's tab panel (the shown column, in every swimlane). */
export const PANEL = 'board-panel';
export const tabId = (status: Status) => `column-tab-${status}`;

/**
 * On a phone the board shows one column at a time: these tabs choose it, each with its count, so
 * In review is one tap away. Arrow keys, Home and End move between tabs (the WAI-ARIA tabs pattern,
 * selection following focus); only the chosen tab is in the Tab order.
 */
export function ColumnTabs({ statuses, counts, active, onSelect }: { statuses: readonly Status[]; counts: ReadonlyMap<Status, number>; active: Status; onSelect: (status: Status) => void }) {
  const go = (status: Status | undefined) => {
    if (!status) return;
    onSelect(status);
    requestAnimationFrame(() => document.getElementById(tabId(status))?.focus());
  };
  return (
    <div
      class="column-tabs"
      role="tablist"
      aria-label="Columns"
      onKeyDown={(e) => {
        const at = statuses.indexOf(active);
        const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: statuses.length - 1 }[e.key];
        if (to === undefined) return;
        e.preventDefault();
        go(statuses[(to + statuses.length) % statuses.length]);
      }}
    >
      {statuses.map((s) => (
        <button key={s} type="button" role="tab" id={tabId(s)} class={`column-tab column-tab-${s}`} aria-selected={s === active} aria-controls={PANEL} tabIndex={s === active ? 0 : -1} onClick={() => onSelect(s)}>
          {STATUS_LABEL[s]} <span class="count">{counts.get(s) ?? 0}</span>
        </button>
      ))}
    </div>
  );
}
