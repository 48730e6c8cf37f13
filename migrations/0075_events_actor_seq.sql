-- The event list filters by actor (`GET /events?actor=…`, issue 36): the web app's Activity page and
-- the fleet's "Its events" link read one principal's events, newest first. Without this index a busy
-- server walks the whole timeline backwards to find a quiet agent's few events.
--
-- It is built in the migration's transaction, so writes to `events` wait while it builds: a few
-- seconds per million events.

CREATE INDEX events_actor_seq ON events (actor_id, seq);
