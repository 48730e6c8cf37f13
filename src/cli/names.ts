import { type BatonClient, DIRECTORY_IDS_MAX, directoryBatches } from '../client/index.ts';

/**
 * The names of the principals a table shows, by id, read from the workspace's directory
 * (`directory_list`, for any token that reads tasks): one read per 60 ids. A token that may not
 * read it gets an empty map, and tables show ids.
 */
export async function principalNames(client: BatonClient, ids: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)].filter((id) => id.startsWith('agt_'));
  const pages = await Promise.all(directoryBatches(wanted).map((batch) => client.directory.list({ ids: batch, limit: DIRECTORY_IDS_MAX }).catch(() => undefined)));
  return new Map(pages.flatMap((page) => page?.data.map((entry) => [entry.id, entry.name] as const) ?? []));
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
