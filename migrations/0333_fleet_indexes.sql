-- Two reads that a fleet makes often and that scanned a table whose size grows with it (issue 44 §1).
-- Both partial: the rows they look for are few. Expand steps: building them reads each table once.

-- Whom a hand-in, an approval or a budget waits on: the enabled humans holding a scope
-- (humansWithScope in src/store/agents.ts). Each hand-in for review asks; the read scanned every
-- principal, agents included: 1.7 ms a hand-in at 10,000 principals.
CREATE INDEX agents_humans ON agents (workspace_id, id) WHERE kind = 'human' AND NOT disabled;

-- When the next task waiting out a back-off becomes claimable (nextClaimableAt in
-- src/store/leases.ts), asked by every claim that found nothing: it scanned every queued task,
-- 270 ms at 86,000 of them, while only tasks whose attempt failed carry a `not_before`.
CREATE INDEX tasks_queue_not_before ON tasks (workspace_id, not_before) WHERE status = 'todo' AND not_before IS NOT NULL;
