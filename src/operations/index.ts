import type { Operation } from './define-operation.ts';
import { listEvents } from './events/list-events.ts';
import { whoami } from './meta/whoami.ts';
import { createTask } from './tasks/create-task.ts';
import { getTask } from './tasks/get-task.ts';
import { listTaskEvents } from './tasks/list-task-events.ts';
import { listTasks } from './tasks/list-tasks.ts';
import { updateTask } from './tasks/update-task.ts';

/** THE registry: every capability Baton has, each defined once. Adapters derive everything from it. */
export const operations: readonly Operation[] = [whoami, createTask, listTasks, getTask, updateTask, listTaskEvents, listEvents];
