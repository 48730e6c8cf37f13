import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * A disclosure of plain buttons (a menu that is not a `<select>`, whose arrow keys would act
 * before the user chose). When it opens, its list's first button takes focus, in the same commit
 * as the list appears (not after paint), so a key pressed at once lands there; Escape closes it
 * and gives focus back to the toggle; focus leaving it closes it. Spread `containerProps` on the
 * element holding the toggle and the list.
 */
export function useDisclosure() {
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (open) list.current?.querySelector('button')?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    toggle.current?.focus();
  };
  const containerProps = {
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key === 'Escape' && open) {
        e.stopPropagation();
        close();
      }
    },
    onFocusOut: (e: FocusEvent) => {
      const inside = (e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null);
      if (open && !inside && e.relatedTarget !== null) setOpen(false);
    },
  };
  return { open, setOpen, toggle, list, close, containerProps };
}

/** The current time, refreshed every `ms` (lease countdowns, relative times). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/** True when a key press belongs to a text field, a select or a dialog's own controls, not to the page. */
export function isTyping(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null;
  if (!target) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName) || target.closest('dialog[open]') !== null;
}

/**
 * Single-key shortcuts (`c`, `/`, `j`, `k`…) while the component is mounted; ignored while the user
 * types in a field or holds a modifier, so they never steal a character.
 */
export function useShortcuts(keys: Record<string, (event: KeyboardEvent) => void>): void {
  const latest = useRef(keys);
  latest.current = keys;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event)) return;
      const handler = latest.current[event.key];
      if (!handler) return;
      handler(event);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}
