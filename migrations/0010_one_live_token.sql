-- One live (unrevoked) token per principal and machine label, under any concurrency: the check the
-- operation made before inserting raced (20 parallel requests made 9 live tokens). Tokens that
-- race already left behind are revoked first, keeping the newest, so the index can be built.
UPDATE tokens t SET revoked_at = now()
WHERE t.revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM tokens n WHERE n.agent_id = t.agent_id AND n.machine = t.machine AND n.revoked_at IS NULL AND n.id > t.id);

CREATE UNIQUE INDEX tokens_one_live_per_machine ON tokens (agent_id, machine) WHERE revoked_at IS NULL;
