import { SYSTEM_ACTOR } from '../domain/scopes.ts';
import type { Principal } from '../domain/principal.ts';
import type { Ids } from '../ids.ts';
import type { EventDraft } from '../operations/define-operation.ts';
import type { NewEventRow } from '../store/events.ts';

/** The row of an event a write emitted: by the caller (or the system, or whom the draft names), under the write's key. */
export function eventRow(ids: Ids, e: EventDraft, caller: Principal, key: string, now: Date): NewEventRow {
  const by = e.by ?? caller;
  const system = by === 'system';
  return {
    id: ids.make('evt'),
    type: e.type,
    subject: e.subject,
    actor_id: system ? SYSTEM_ACTOR.id : by.id,
    actor_kind: system ? SYSTEM_ACTOR.kind : by.kind,
    token_id: system ? null : by.tokenId,
    machine: system ? null : by.machine,
    idempotency_key: key,
    approval_id: e.approvalId ?? null,
    data: e.data,
    created_at: now,
  };
}
