-- Rate counts without a hot row (store/tokens.ts): each token's count in a window is split over
-- 16 rows, one per database connection's pg_backend_pid() % 16, and read as their sum, so one
-- token's requests on different connections do not queue on one row lock. UNLOGGED and holding
-- only the current windows: recreating it forgives at most one window.
DROP TABLE rate_counters;
CREATE UNLOGGED TABLE rate_counters (
  token_id     text NOT NULL,
  window_start bigint NOT NULL,
  shard        smallint NOT NULL,
  count        integer NOT NULL,
  PRIMARY KEY (token_id, window_start, shard)
);
