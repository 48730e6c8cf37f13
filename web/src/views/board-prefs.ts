import { useEffect, useState } from 'preact/hooks';
import { STATUSES, type Status } from '../types.ts';

/**
 * A person's board preferences, kept in this browser's localStorage under their principal id (the
 * server has no per-person settings store): collapsed columns, the column tab shown on a phone,
 * and saved views. A view itself is a board path (`/?label=docs&sort=title`): its link reproduces
 * it anywhere; the saved list only gives such links names.
 */
export interface SavedView {
  name: string;
  /** The board's path with its query: filters, search, swimlanes, sort, hidden columns. */
  path: string;
}

export interface BoardPrefs {
  collapsed: Status[];
  tab: Status;
  views: SavedView[];
}

const EMPTY: BoardPrefs = { collapsed: [], tab: 'todo', views: [] };
/** Enough for any team's habits, small enough that a runaway script cannot fill the storage. */
const MAX_VIEWS = 50;

const isStatus = (s: unknown): s is Status => (STATUSES as readonly unknown[]).includes(s);

const isView = (v: unknown): v is SavedView => {
  const { name, path } = (typeof v === 'object' && v !== null ? v : {}) as Partial<Record<keyof SavedView, unknown>>;
  // A board path only: a stored view never navigates anywhere else.
  return typeof name === 'string' && typeof path === 'string' && (path === '/' || path.startsWith('/?'));
};

/** The stored preferences, whatever the storage holds: anything unreadable reads as none. */
function readPrefs(raw: string | null): BoardPrefs {
  try {
    const value = JSON.parse(raw ?? '{}') as Partial<Record<keyof BoardPrefs, unknown>>;
    const views = Array.isArray(value.views) ? (value.views as unknown[]).filter(isView).slice(0, MAX_VIEWS) : [];
    return {
      collapsed: Array.isArray(value.collapsed) ? value.collapsed.filter(isStatus) : [],
      tab: isStatus(value.tab) ? value.tab : EMPTY.tab,
      views,
    };
  } catch {
    return EMPTY;
  }
}

/** `views` with `view` saved under its name: a view of the same name is replaced, in its place. */
export function withView(views: readonly SavedView[], view: SavedView): SavedView[] {
  const at = views.findIndex((v) => v.name === view.name);
  if (at >= 0) return views.map((v, i) => (i === at ? view : v));
  return [...views, view].slice(-MAX_VIEWS);
}

/** The preferences of principal `id`, and `update`, which stores a change at once (other tabs read it on their next load). */
export function useBoardPrefs(id: string) {
  const key = `baton.board.${id}`;
  const [prefs, setPrefs] = useState(() => readPrefs(localStorage.getItem(key)));
  const update = (change: Partial<BoardPrefs>) =>
    setPrefs((current) => {
      const next = { ...current, ...change };
      try {
        localStorage.setItem(key, JSON.stringify(next));
      } catch {
        // Storage full or refused (private mode): the preference holds for this visit only.
      }
      return next;
    });
  return { prefs, update };
}

const NARROW = '(max-width: 720px)';

/** Whether the viewport is phone-narrow (720 px and under, the stylesheet's one-column width): the board then shows one column at a time, with tabs. */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => matchMedia(NARROW).matches);
  useEffect(() => {
    const media = matchMedia(NARROW);
    const change = () => setNarrow(media.matches);
    media.addEventListener('change', change);
    return () => media.removeEventListener('change', change);
  }, []);
  return narrow;
}
