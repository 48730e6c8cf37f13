import type { BatonClient } from '../client/index.ts';

/**
 * The names of the principals a table shows, by id, read through the API (`agents_get`). Reading
 * principals needs `agents:admin`: for a token without it the map is empty and tables show ids.
 */
export async function principalNames(client: BatonClient, ids: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)].filter((id) => id.startsWith('agt_'));
  const names = new Map<string, string>();
  const [first, ...rest] = wanted;
  if (first === undefined) return names;
  // One read first: when the token may not read principals, the rest would be refused too.
  const head = await client.agents.get({ id: first }).catch(() => undefined);
  if (!head) return names;
  names.set(head.id, head.name);
  const others = await Promise.all(rest.map((id) => client.agents.get({ id }).catch(() => undefined)));
  for (const agent of others) if (agent) names.set(agent.id, agent.name);
  return names;
}

/** A principal as a table shows it: its name when known, else its id. */
export function nameOf(names: ReadonlyMap<string, string>, id: string | undefined): string {
  return id === undefined ? '' : (names.get(id) ?? id);
}

/** The titles of the tasks a table names, by id (a task deleted since, or not readable, is left out). */
export async function taskTitles(client: BatonClient, ids: Iterable<string>): Promise<Map<string, string>> {
  const tasks = await Promise.all([...new Set(ids)].filter((id) => id.startsWith('tsk_')).map((id) => client.tasks.get({ id }).catch(() => undefined)));
  return new Map(tasks.flatMap((task) => (task?.title ? [[task.id, task.title] as const] : [])));
}
