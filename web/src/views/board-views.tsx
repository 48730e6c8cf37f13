import { useEffect, useRef, useState } from 'preact/hooks';
import { navigate } from '../router.ts';
import type { BoardPrefs, SavedView } from './board-prefs.ts';
import { withView } from './board-prefs.ts';
import type { BoardQuery } from './board-query.ts';

interface ViewsProps {
  query: BoardQuery;
  /** The board's path for `query`: what a saved view or a copied link keeps. */
  path: string;
  views: readonly SavedView[];
  onViews: (change: Pick<BoardPrefs, 'views'>) => void;
  onChange: (change: Partial<BoardQuery>) => void;
}

/**
 * Saved views and the closed columns: choose a saved view (its path: filters, search, swimlanes,
 * sort), save the board as it is under a name, forget a view, copy the board's link (which
 * reproduces it for anyone), hide or show the Done and Cancelled columns, and show archived tasks.
 */
export function BoardViews({ query, path, views, onViews, onChange }: ViewsProps) {
  const [naming, setNaming] = useState<string | null>(null);
  const [said, setSaid] = useState('');
  const nameBox = useRef<HTMLInputElement>(null);
  // Once, as the name field opens (a ref callback would run at every render and steal focus).
  useEffect(() => {
    if (naming !== null) nameBox.current?.focus();
  }, [naming !== null]);
  const current = views.find((v) => v.path === path);
  const save = (event: Event) => {
    event.preventDefault();
    const name = naming?.trim();
    if (!name) return;
    onViews({ views: withView(views, { name, path }) });
    setNaming(null);
    setSaid(`Saved view “${name}”.`);
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(`${location.origin}${path}`);
      setSaid('Link copied: it opens this view for anyone signed in.');
    } catch {
      setSaid(`Copy this link: ${location.origin}${path}`);
    }
  };
  return (
    <div class="board-views">
      <select
        aria-label="Saved views"
        value={current?.name ?? ''}
        onChange={(e) => {
          const view = views.find((v) => v.name === e.currentTarget.value);
          if (view) navigate(view.path);
        }}
      >
        <option value="">{current || views.length > 0 ? 'Saved views…' : 'No saved views'}</option>
        {views.map((v) => (
          <option key={v.name} value={v.name}>
            {v.name}
          </option>
        ))}
      </select>
      {naming === null ? (
        <button type="button" class="button-quiet" onClick={() => setNaming(current?.name ?? '')}>
          Save view…
        </button>
      ) : (
        <form class="board-view-name" onSubmit={save} aria-label="Save this view">
          <input
            type="text"
            aria-label="View name"
            placeholder="View name"
            maxLength={60}
            required
            value={naming}
            ref={nameBox}
            onInput={(e) => setNaming(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') setNaming(null);
            }}
          />
          <button type="submit">Save</button>
          <button type="button" class="button-quiet" onClick={() => setNaming(null)}>
            Cancel
          </button>
        </form>
      )}
      {current && (
        <button
          type="button"
          class="button-quiet"
          onClick={() => {
            onViews({ views: views.filter((v) => v !== current) });
            setSaid(`Forgot view “${current.name}”.`);
          }}
        >
          Forget “{current.name}”
        </button>
      )}
      <button type="button" class="button-quiet" onClick={() => void copy()}>
        Copy link
      </button>
      <label class="check board-hide">
        <input type="checkbox" checked={query.hideClosed} onChange={(e) => onChange({ hideClosed: e.currentTarget.checked })} /> Hide Done and Cancelled
      </label>
      <label class="check board-hide">
        <input type="checkbox" checked={query.showArchived} onChange={(e) => onChange({ showArchived: e.currentTarget.checked })} /> Show archived
      </label>
      <span class="muted small board-views-said" role="status">
        {said}
      </span>
    </div>
  );
}
