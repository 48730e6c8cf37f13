-- An ask may be addressed to a role (spec/asks.md, issue 40 §1): every enabled human holding it
-- is asked. Exactly one of to_id (a principal) and to_role names who is asked now; `chain` holds
-- principal ids and `role:<role>` entries alike.
-- Expand only: the previous release always writes to_id, which satisfies the new CHECK (it would
-- read a role ask's `to` as null; only this release's code makes such asks).
ALTER TABLE asks ALTER COLUMN to_id DROP NOT NULL;
ALTER TABLE asks ADD COLUMN to_role text CHECK (to_role IN ('owner', 'admin', 'member', 'viewer'));
ALTER TABLE asks ADD CONSTRAINT asks_one_addressee CHECK ((to_id IS NULL) <> (to_role IS NULL));
-- asks_list `to=role:<role>` (and `to=me` for a human): the open asks of a role.
CREATE INDEX asks_open_to_role ON asks (to_role, id) WHERE status = 'open' AND to_role IS NOT NULL;
