import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { SYSTEM_ACTOR } from '../domain/scopes.ts';
import { type Escalation, effectiveEscalation } from '../domain/workspace-settings.ts';
import type { Ids } from '../ids.ts';
import type { Tx } from '../store/connection.ts';
import { adjustOverdueAsks, escalationTargets, markInboxOverdue, markOverdueApprovals, markOverdueAsks, markOverdueReviews, type Overdue, workspacesWithWaits } from '../store/escalation.ts';
import { appendEvents } from '../store/events.ts';
import { insertInboxItems } from '../store/inbox.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import { listWorkspaceSettings } from '../store/workspaces.ts';

const BATCH = 100;

type Kind = 'ask' | 'approval' | 'review';

const KINDS: readonly Kind[] = ['ask', 'approval', 'review'];

const MARK: Record<Kind, (tx: Tx, q: { before: Date; now: Date; limit: number }) => Promise<Overdue[]>> = {
  ask: markOverdueAsks,
  approval: markOverdueApprovals,
  review: markOverdueReviews,
};

const EVENT = { ask: 'ask.overdue', approval: 'approval.overdue', review: 'task.review_overdue' } as const;

/**
 * One pass, in each workspace with something waiting past an SLA, in turn: each open ask, pending approval and task in review that has waited longer than its SLA
 * (the workspace's own, else `config.escalation`; 0 = never) is marked overdue once, its addressees' inbox items marked, and
 * each escalation target not already on it gets an `overdue` inbox item (emailed at once) and the
 * wait an event by the system actor, all in one transaction per batch. Exactly once across
 * instances: the mark is taken with SKIP LOCKED and re-checked by the UPDATE that sets it.
 */
export async function escalateOverdue(db: Kysely<DB>, deps: { clock: Clock; ids: Ids; config: Pick<Config, 'escalation'> }): Promise<Record<Kind, number>> {
  const report: Record<Kind, number> = { ask: 0, approval: 0, review: 0 };
  const workspaces = (await listWorkspaceSettings(db)).map((workspace) => {
    const sla = effectiveEscalation(workspace, deps.config.escalation);
    return { id: workspace.id, to: sla.to, limits: { ask: sla.askS, approval: sla.approvalS, review: sla.reviewS } satisfies Record<Kind, number> };
  });
  // Which workspaces have anything waiting longer than the shortest SLA of its kind: only those are visited.
  const now = deps.clock.now();
  const waiting = new Map<Kind, Set<string>>();
  for (const kind of KINDS) {
    const among = workspaces.filter((w) => w.limits[kind] > 0);
    if (among.length === 0) continue;
    const shortest = Math.min(...among.map((w) => w.limits[kind]));
    waiting.set(kind, new Set(await workspacesWithWaits(db, kind, { among: among.map((w) => w.id), before: new Date(now.getTime() - shortest * 1000), now })));
  }
  for (const workspace of workspaces) {
    // Only workspaces with an SLA for a kind were asked about it.
    const kinds = KINDS.filter((k) => waiting.get(k)?.has(workspace.id));
    if (kinds.length > 0) await escalateIn(db, workspace.id, deps, { kinds, limits: workspace.limits, to: workspace.to, report });
  }
  return report;
}

async function escalateIn(
  db: Kysely<DB>,
  workspace: string,
  deps: { clock: Clock; ids: Ids },
  pass: { kinds: Kind[]; limits: Record<Kind, number>; to: Escalation['to']; report: Record<Kind, number> },
): Promise<void> {
  const { kinds, limits, report } = pass;
  // Names and roles name this workspace's people.
  const targets = await inWorkspace(db, workspace, (tx) => escalationTargets(tx, pass.to));
  for (const kind of kinds) {
    for (;;) {
      const marked = await inWorkspace(db, workspace, async (tx) => {
        const now = deps.clock.now();
        const due = await MARK[kind](tx, { before: new Date(now.getTime() - limits[kind] * 1000), now, limit: BATCH });
        for (const wait of due) {
          if (kind === 'ask' && wait.task_id) await adjustOverdueAsks(tx, wait.task_id, 1);
          // Whoever the wait is on already (an ask's addressees, an approval's deciders) has its item marked, not a second one.
          if (kind !== 'review') wait.on.push(...(await markInboxOverdue(tx, wait.id, kind, now)));
          const to = targets.filter((t) => !wait.on.includes(t) && t !== wait.by_id);
          const taskId = wait.task_id;
          if (taskId) {
            await insertInboxItems(
              tx,
              to.map((principal) => ({ id: deps.ids.make('inb'), principal_id: principal, kind: 'overdue' as const, task_id: taskId, ref_id: wait.id, by_id: wait.by_id, excerpt: wait.excerpt, created_at: now, overdue_at: now })),
            );
          }
        }
        await appendEvents(
          tx,
          due.map((wait) => ({
            id: deps.ids.make('evt'),
            type: EVENT[kind],
            subject: kind === 'approval' ? wait.id : (wait.task_id ?? wait.id),
            actor_id: SYSTEM_ACTOR.id,
            actor_kind: SYSTEM_ACTOR.kind,
            token_id: null,
            machine: null,
            idempotency_key: null,
            data: { [`${kind === 'review' ? 'task' : kind}_id`]: wait.id, waiting_since: new Date(wait.since).toISOString(), sla_s: limits[kind], notified: targets.filter((t) => !wait.on.includes(t) && t !== wait.by_id) },
            created_at: now,
          })),
        );
        return due.length;
      });
      report[kind] += marked;
      if (marked < BATCH) break;
    }
  }
}
