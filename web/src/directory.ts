import { useEffect, useState } from 'preact/hooks';
import { DIRECTORY_IDS_MAX, directoryBatches } from '../../src/client/index.ts';
import { call } from './api.ts';
import { useSession } from './session.ts';

/** What a picker shows beside a name: an agent or a person, and whether it is disabled (never offered). */
export interface PrincipalMark {
  kind: 'human' | 'agent';
  disabled: boolean;
}

/**
 * The names of the principals the app shows, for this signed-in page load (held in the session
 * context): ids a view shows are asked of `directory_list` together, in one call per 60 of them,
 * each id once. Answers arrive into `names`, the map every view reads, and wake
 * the views that asked. An id the workspace does not know stays an id.
 */
export class Directory {
  /** Ids asked for or answered already: each is looked up once per page load. */
  readonly #asked = new Set<string>();
  #queued: string[] = [];
  readonly #listeners = new Set<() => void>();
  readonly names: Map<string, string>;
  /** Kind and state of the principals a read told (the directory, agents_list); a name learned otherwise has none. */
  readonly marks = new Map<string, PrincipalMark>();
  /** Whether this token may read the directory (every caller that reads tasks may). */
  readonly #enabled: boolean;

  constructor(names: Map<string, string>, enabled: boolean) {
    this.names = names;
    this.#enabled = enabled;
    for (const id of names.keys()) this.#asked.add(id);
  }

  /** Learns names another read gave (agents_list, a live event) without asking for them, with their mark where it told it. */
  learn(id: string, name: string, mark?: PrincipalMark): void {
    this.#asked.add(id);
    this.names.set(id, name);
    if (mark) this.marks.set(id, { kind: mark.kind, disabled: mark.disabled });
  }

  /** Asks for the names of `ids` not yet known; the calls go out together once the current render is done. */
  want(ids: readonly string[]): void {
    if (!this.#enabled) return;
    const fresh = ids.filter((id) => id.startsWith('agt_') && !this.#asked.has(id));
    if (fresh.length === 0) return;
    for (const id of fresh) this.#asked.add(id);
    if (this.#queued.length === 0) queueMicrotask(() => void this.#flush());
    this.#queued.push(...fresh);
  }

  /** Calls `listener` whenever names arrive; answers the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async #flush(): Promise<void> {
    const ids = this.#queued;
    this.#queued = [];
    await Promise.all(
      directoryBatches(ids).map(async (batch) => {
        try {
          const page = await call('directory_list', { ids: batch, limit: DIRECTORY_IDS_MAX });
          for (const entry of page.data) this.learn(entry.id, entry.name, entry);
        } catch {
          // Not named this time: the ids stay shown as ids, and may be asked again.
          for (const id of batch) this.#asked.delete(id);
        }
      }),
    );
    for (const listener of this.#listeners) listener();
  }
}

/**
 * Principal id → name, for the ids given (asked of the directory if not known yet); the view renders
 * again when names arrive. Unknown ids read as themselves through `names.get(id) ?? id`.
 */
export function useNames(ids: readonly (string | null | undefined)[]): Map<string, string> {
  const { directory } = useSession();
  const [, setVersion] = useState(0);
  const wanted = ids.filter((id): id is string => typeof id === 'string');
  const key = wanted.join(',');
  useEffect(() => directory.subscribe(() => setVersion((v) => v + 1)), [directory]);
  useEffect(() => directory.want(wanted), [directory, key]);
  return directory.names;
}
