/** Event types written today. Names are `<entity>.<past-tense verb>`. */
export const EVENT_TYPES = ['task.created', 'task.updated', 'task.status_changed', 'agent.created', 'token.created'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
