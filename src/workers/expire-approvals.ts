import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { closeExpiredApprovalItems, workspacesWithExpiredApprovalItems } from '../store/inbox.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace } from '../store/workspace-scope.ts';

/**
 * One pass, in each workspace with such items in turn: the inbox items of approvals that expired undecided turn
 * `done`, as a decision turns them. An approval's expiry is its `expires_at` passing (nothing is
 * written then), so this pass is where it takes effect on the inbox. Safe on any number of
 * instances at once: an item another instance closed first is no longer open.
 */
export async function closeExpiredApprovals(db: Kysely<DB>, deps: { clock: Clock }): Promise<{ closed: number }> {
  let closed = 0;
  for (const workspace of await workspacesWithExpiredApprovalItems(db, deps.clock.now())) closed += await inWorkspace(db, workspace, (tx) => closeExpiredApprovalItems(tx, deps.clock.now()));
  return { closed };
}
