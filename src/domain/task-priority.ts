/** Task priorities, lowest first. Stored as their index so claims can order by them. */
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

export function priorityRank(priority: TaskPriority): number {
  return TASK_PRIORITIES.indexOf(priority);
}

export function priorityFromRank(rank: number): TaskPriority {
  return TASK_PRIORITIES[rank] ?? 'normal';
}
