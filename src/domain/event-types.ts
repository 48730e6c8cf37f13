/** Event types written today. Names are `<entity>.<past-tense verb>`; lease events have the task as subject. */
export const EVENT_TYPES = [
  'task.created',
  'task.updated',
  'task.status_changed',
  'task.claimed',
  'lease.renewed',
  'lease.released',
  'lease.expiring',
  'lease.expired',
  'task.deleted',
  'approval.requested',
  'approval.granted',
  'approval.denied',
  'agent.created',
  'agent.updated',
  'token.created',
  'token.revoked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
