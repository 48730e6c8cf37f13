import { useEffect, useId, useState } from 'preact/hooks';
import { call } from './api.ts';
import { type PrincipalMark, useNames } from './directory.ts';
import { useSession } from './session.ts';

/** A choice that is not one principal ("Nobody", "Mine"), listed before the principals. */
export interface FixedChoice {
  value: string;
  label: string;
}

/** The most principals the list shows at once: type more of the name to find others. */
const SHOWN = 12;

/** What is typed, compared as a mention spells a name: any case, `_` for a space (as `directory_list`'s `prefix`). */
const spelled = (text: string) => text.trim().replaceAll(' ', '_').toLowerCase();

/** An id pasted whole (`agt_` and 26 characters) is offered as itself, named once the directory answers. */
const PASTED_ID = /^agt_[0-9A-HJKMNP-TV-Z]{26}$/i;

/**
 * A principal (or one of the `fixed` choices), picked by typing the start of a name: a combobox
 * (ARIA 1.2, list autocomplete). The names the app already knows answer at once; the workspace's
 * directory (`directory_list` with `prefix`) adds the others as you type, so a fleet of thousands
 * is found by name without the app ever listing it whole. Arrow keys move through the list, Enter,
 * Tab (after typing) or a click picks the highlighted match; Escape, or leaving the field otherwise,
 * keeps the value it had.
 */
export function PrincipalPicker(props: {
  value: string;
  onChange: (value: string) => void;
  fixed?: readonly FixedChoice[];
  id?: string;
  /** The accessible name, where no `<label for>` names the field. */
  label?: string;
  describedBy?: string;
  invalid?: boolean;
}) {
  const { directory } = useSession();
  // A value the page was given by id (the board's `?who=agt_…`) is shown by name once the directory
  // answers; any name learned while open (a search's answer) renders again.
  const names = useNames([props.value]);
  const listId = useId();
  const fixed = props.fixed ?? [];
  /** The text being typed; null while the field shows its value. */
  const [query, setQuery] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  /** The directory's answer for the prefix typed (null while it is asked). */
  const [found, setFound] = useState<{ prefix: string; ids: string[] } | null>(null);
  const prefix = spelled(query ?? '');
  const pastedId = PASTED_ID.test(prefix) ? `agt_${prefix.slice(4).toUpperCase()}` : null;

  useEffect(() => {
    if (!open || prefix === '') return undefined;
    if (pastedId) {
      directory.want([pastedId]);
      return undefined;
    }
    // Asked once typing pauses; each answer is kept with the prefix it answers, so a late one for an older prefix is not shown.
    const timer = setTimeout(() => {
      call('directory_list', { prefix, limit: SHOWN }).then(
        (page) => {
          const ids = page.data.filter((entry) => !entry.disabled).map((entry) => entry.id);
          for (const entry of page.data) directory.learn(entry.id, entry.name, entry);
          setFound({ prefix, ids });
        },
        () => setFound({ prefix, ids: [] }),
      );
    }, 150);
    return () => clearTimeout(timer);
  }, [open, prefix, pastedId, directory]);

  // The highlighted match stays in sight as the arrow keys move through a list longer than its box.
  useEffect(() => {
    if (open) document.getElementById(`${listId}-${active}`)?.scrollIntoView({ block: 'nearest' });
  }, [open, active, listId]);

  const labelOf = (value: string) => fixed.find((choice) => choice.value === value)?.label ?? names.get(value) ?? value;
  const options = choices();
  const searching = prefix !== '' && !pastedId && found?.prefix !== prefix;

  function choices(): FixedChoice[] {
    const matches = (name: string) => spelled(name).startsWith(prefix);
    const pinned = fixed.filter((choice) => matches(choice.label));
    if (pastedId) return [...pinned, { value: pastedId, label: names.get(pastedId) ?? pastedId }];
    // A disabled principal is never offered: it can be given no work (a name shown on a page may be one).
    const known = [...names].filter(([id, name]) => !fixed.some((choice) => choice.value === id) && !directory.marks.get(id)?.disabled && matches(name));
    const fromDirectory = found?.prefix === prefix ? found.ids.filter((id) => !known.some(([knownId]) => knownId === id)).map((id) => [id, names.get(id) ?? id] as const) : [];
    const principals = [...known, ...fromDirectory].sort((a, b) => a[1].localeCompare(b[1])).slice(0, SHOWN);
    return [...pinned, ...principals.map(([value, label]) => ({ value, label }))];
  }

  const close = () => {
    setOpen(false);
    setQuery(null);
    setActive(0);
  };
  const pick = (choice: FixedChoice) => {
    if (!fixed.some((f) => f.value === choice.value)) directory.learn(choice.value, choice.label);
    props.onChange(choice.value);
    close();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!open) return setOpen(true);
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((i) => Math.min(Math.max(i + step, 0), Math.max(options.length - 1, 0)));
    } else if (e.key === 'Enter' && open && !e.ctrlKey && !e.metaKey) {
      // Enter picks; it does not submit the form the field is in (Ctrl+Enter still does, where a form takes it).
      e.preventDefault();
      const choice = options[active];
      if (choice) pick(choice);
    } else if (e.key === 'Tab' && open && query !== null) {
      // The highlighted match is taken on the way out, as a `<select>` takes what was typed (focus moves on).
      const choice = options[active];
      if (choice) pick(choice);
    } else if (e.key === 'Escape' && open) {
      e.preventDefault();
      close();
    }
  };

  return (
    <div class="picker">
      <input
        id={props.id}
        type="text"
        role="combobox"
        aria-label={props.label}
        aria-autocomplete="list"
        aria-expanded={open && options.length > 0}
        aria-controls={listId}
        aria-activedescendant={open && options[active] ? `${listId}-${active}` : undefined}
        aria-describedby={props.describedBy}
        aria-invalid={props.invalid || undefined}
        autocomplete="off"
        spellcheck={false}
        placeholder="Type a name"
        value={query ?? labelOf(props.value)}
        onClick={() => setOpen(true)}
        onFocus={(e) => e.currentTarget.select()}
        onInput={(e) => {
          setQuery(e.currentTarget.value);
          setActive(0);
          setOpen(true);
        }}
        onKeyDown={onKeyDown}
        onBlur={close}
      />
      <ul id={listId} role="listbox" class="suggestions picker-list" aria-label="Matching people and agents" hidden={!open || options.length === 0}>
        {options.map((choice, i) => (
          <li
            key={choice.value}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === active}
            class={i === active ? 'picker-option active' : 'picker-option'}
            aria-describedby={directory.marks.has(choice.value) ? `${listId}-${i}-kind` : undefined}
            // Mouse down, not click: the field keeps its focus (a blur would close the list first).
            onMouseDown={(e) => {
              e.preventDefault();
              pick(choice);
            }}
          >
            {choice.label}
            {markOf(directory.marks.get(choice.value), `${listId}-${i}-kind`)}
          </li>
        ))}
      </ul>
      {open && options.length === 0 && (
        <p class="muted small picker-empty" role="status">
          {searching ? 'Searching…' : `No one’s name begins “${query ?? ''}”.`}
        </p>
      )}
      {open && searching && options.length > 0 && (
        <p class="sr-only" role="status">
          Searching the directory…
        </p>
      )}
    </div>
  );
}

/** Whether a match is an agent or a human (as the app's principal chips say), beside its name (its option's description, so its accessible name stays the name). */
function markOf(mark: PrincipalMark | undefined, id: string) {
  if (!mark) return null;
  return (
    <span id={id} class="picker-kind" aria-hidden="true">
      {mark.kind}
    </span>
  );
}
