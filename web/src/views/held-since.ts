import { useEffect, useRef, useState } from 'preact/hooks';
import { getAll } from '../api.ts';

/**
 * When each lease the board shows was granted (lease id → ms), for a card's "held for": one read of
 * `GET /leases?state=active` (up to 300), and another only when the board shows a lease not read
 * yet, so a claim costs one request, not one per card. A lease the viewer may not list (an agent
 * sees only its own) is asked for once and then left without a time.
 */
export function useHeldSince(leaseIds: readonly string[]): ReadonlyMap<string, number> {
  const [since, setSince] = useState<ReadonlyMap<string, number>>(new Map());
  const asked = useRef(new Set<string>());
  const reading = useRef(false);
  // Bumped after each read, so a lease that appeared during it is read next.
  const [round, setRound] = useState(0);
  const key = leaseIds.join(',');
  useEffect(() => {
    const missing = leaseIds.filter((id) => !asked.current.has(id));
    if (missing.length === 0 || reading.current) return;
    for (const id of missing) asked.current.add(id);
    reading.current = true;
    getAll('leases_list', { state: 'active' }, 3)
      .then(
        (read) => setSince(new Map(read.data.map((l) => [l.id, Date.parse(l.acquired_at)]))),
        () => undefined,
      )
      .finally(() => {
        reading.current = false;
        setRound((r) => r + 1);
      });
  }, [key, round]);
  return since;
}
