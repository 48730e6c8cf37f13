import type { RefObject } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { PRIORITIES } from '../types.ts';
import { type BoardQuery, type Group, SORT_LABEL, SORTS, type Sort } from './board-query.ts';
import { PrincipalPicker } from '../principal-picker.tsx';

/** The person filter's choices besides one principal. */
const WHO = [
  { value: '', label: 'Anyone' },
  { value: 'me', label: 'Mine' },
  { value: 'none', label: "Nobody's (unassigned)" },
];

/**
 * The board's search, filters and sort. Each change is a navigation (the URL keeps it); the search
 * box is the one exception while typing, and runs its search on Enter or the Search button.
 */
export function BoardFilters({ query, labels, searchBox, onChange }: { query: BoardQuery; labels: readonly string[]; searchBox: RefObject<HTMLInputElement | null>; onChange: (change: Partial<BoardQuery>) => void }) {
  const [text, setText] = useState(query.q);
  useEffect(() => setText(query.q), [query.q]);
  const filtered = query.q || query.priority || query.label || query.who;
  return (
    <form
      class="filters board-filters"
      role="search"
      aria-label="Search and filter tasks"
      onSubmit={(e) => {
        e.preventDefault();
        onChange({ q: text.trim() });
      }}
    >
      <input
        ref={searchBox}
        type="search"
        class="board-search"
        aria-label="Search titles, descriptions and comments"
        aria-keyshortcuts="/"
        placeholder="Search titles, descriptions, comments"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <button type="submit">Search</button>
      <select aria-label="Filter by priority" value={query.priority} onChange={(e) => onChange({ priority: e.currentTarget.value as BoardQuery['priority'] })}>
        <option value="">Any priority</option>
        {PRIORITIES.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
      <select aria-label="Filter by label" value={query.label} onChange={(e) => onChange({ label: e.currentTarget.value })}>
        <option value="">Any label</option>
        {(query.label && !labels.includes(query.label) ? [query.label, ...labels] : labels).map((l) => (
          <option key={l} value={l}>
            {l}
          </option>
        ))}
      </select>
      <PrincipalPicker label="Filter by person" value={query.who} onChange={(who) => onChange({ who })} fixed={WHO} />
      <select aria-label="Group by" value={query.group} onChange={(e) => onChange({ group: e.currentTarget.value as Group | '' })}>
        <option value="">No swimlanes</option>
        <option value="assignee">Swimlanes by person</option>
        <option value="label">Swimlanes by label</option>
      </select>
      <select aria-label="Sort" value={query.sort} onChange={(e) => onChange({ sort: e.currentTarget.value as Sort })}>
        {SORTS.filter((s) => s !== 'relevance' || query.q).map((s) => (
          <option key={s} value={s}>
            {SORT_LABEL[s]}
          </option>
        ))}
      </select>
      {filtered && (
        <button type="button" class="button-quiet" onClick={() => onChange({ q: '', priority: '', label: '', who: '' })}>
          Clear filters
        </button>
      )}
    </form>
  );
}
