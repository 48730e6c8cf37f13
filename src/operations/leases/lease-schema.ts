import { z } from 'zod';
import { idPattern } from '../../ids.ts';
import type { LeaseRow } from '../../store/leases.ts';
import { holderRef } from '../tasks/task-schema.ts';

export const leaseId = z.string().regex(new RegExp(idPattern('lea')), 'must be a lease id: lea_ followed by a 26-character ULID');

export const LEASE_STATES = ['active', 'released', 'expired', 'ended'] as const;

export const leaseOutput = z.object({
  id: z.string(),
  task_id: z.string(),
  holder: holderRef,
  machine: z.string().nullable(),
  epoch: z.int().describe('Fencing epoch; send it as `lease_epoch` on task writes.'),
  state: z.enum(LEASE_STATES).describe('`active` until released, expired, or ended by a status change; past expires_at it reads as expired even before the sweeper runs.'),
  ttl_s: z.int(),
  heartbeat_interval_s: z.int().describe('Send a heartbeat at least this often (a third of the TTL).'),
  acquired_at: z.iso.datetime(),
  renewed_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
});
export type Lease = z.infer<typeof leaseOutput>;

/** The lease as served; an active row past its expiry already reads as expired. */
export function toLease(row: LeaseRow, now: Date): Lease {
  const lapsed = row.state === 'active' && row.expires_at <= now;
  return {
    id: row.id,
    task_id: row.task_id,
    holder: { id: row.holder_id, kind: row.holder_kind },
    machine: row.machine,
    epoch: row.epoch,
    state: lapsed ? 'expired' : row.state,
    ttl_s: row.ttl_s,
    heartbeat_interval_s: Math.max(1, Math.floor(row.ttl_s / 3)),
    acquired_at: row.acquired_at.toISOString(),
    renewed_at: row.renewed_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    ended_at: lapsed ? row.expires_at.toISOString() : (row.ended_at?.toISOString() ?? null),
  };
}
