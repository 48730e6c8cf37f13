-- Whom a hand-in, an approval or a budget waits on: the enabled humans holding a scope
-- (humansWithScope in src/store/agents.ts). Each hand-in for review asks; without an index that
-- read scanned every principal, agents included: 1.7 ms a hand-in at 10,000 principals, growing
-- with the fleet (issue 44 §1). Partial: agents, the great majority, stay out of it. Building it
-- reads the principals once; an expand step, no downtime.
CREATE INDEX agents_humans ON agents (workspace_id, id) WHERE kind = 'human' AND NOT disabled;
