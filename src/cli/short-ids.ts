import type { BatonClient } from '../client/index.ts';
import { CliError } from './context.ts';
import { EXIT } from './exit-codes.ts';

/** A task id in full; anything else that is not a short id goes to the server as given. */
const FULL_TASK_ID = /^tsk_[0-9A-HJKMNP-TV-Z]{26}$/i;
/** A short task id: up to 25 characters of the ULID, with or without `tsk_` (any case, as ULIDs are); fewer than 6 are refused. */
const SHORT_TASK_ID = /^(?:tsk_)?([0-9A-HJKMNP-TV-Z]{1,25})$/i;
/** The fewest characters of a ULID that name a task. */
const SHORT_MIN = 6;
/** How many candidates an ambiguous prefix lists. */
const CANDIDATES = 10;

/** How a task argument is described in a command's help: an id, or a unique prefix of it. */
export const TASK_ID = 'task id (tsk_…), or a unique prefix of its ULID, 6 characters or more';

/**
 * The task a command names: an id in full, or any unique prefix of its ULID (≥ 6 characters), as
 * git names a commit by a prefix of its hash. Resolved by the server (`tasks_list` `id_prefix`);
 * no task is a not-found (exit 4), several are a usage error (exit 2) that lists them, and fewer
 * than 6 characters a usage error without a request.
 */
export async function resolveTaskId(client: BatonClient, given: string): Promise<string> {
  const short = SHORT_TASK_ID.exec(given)?.[1];
  if (FULL_TASK_ID.test(given) || short === undefined) return given;
  if (short.length < SHORT_MIN) throw new CliError(`${given} is too short to name a task: give its id (tsk_…) or at least ${SHORT_MIN} characters of its ULID.`, EXIT.usage);
  const prefix = `tsk_${short.toUpperCase()}`;
  const page = await client.tasks.list({ id_prefix: short, limit: CANDIDATES });
  const [only, ...others] = page.data;
  if (!only) throw new CliError(`No task id starts with ${prefix}.`, EXIT.notFound);
  if (others.length === 0) return only.id;
  const candidates = page.data.map((t) => `${t.id} (${t.title ?? ''})`).join(', ');
  throw new CliError(`${prefix} names more than one task: ${candidates}${page.has_more ? ', and more' : ''}. Give more characters of the id.`, EXIT.usage);
}
