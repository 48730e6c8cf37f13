-- Retention: old events can be archived to a file and deleted (`baton archive-events`). Each run
-- records what it took, so a `since` cursor into an archived range gets a clear 410, not a 400.
CREATE TABLE event_archives (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Every event with seq <= through_seq is gone from the table (archived by this run or an earlier one).
  through_seq bigint NOT NULL,
  -- The greatest event id (ids sort by creation time) this run archived: a `since` at or below it is archived.
  max_id      text NOT NULL,
  event_count bigint NOT NULL,
  -- The cutoff asked for: only events created before it were considered.
  before      timestamptz NOT NULL,
  archived_at timestamptz NOT NULL,
  -- Where the operator wrote the archive (as given to the CLI), for the record.
  file        text NOT NULL
);

-- Events stay append-only for every path but archiving: a DELETE passes only in a transaction that
-- set `baton.archiving` to 'on' (store/event-archive.ts does, and records the run in the same one).
CREATE OR REPLACE FUNCTION baton_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('baton.archiving', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
