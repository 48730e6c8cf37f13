-- The run record (issue 41 §1): each lease is one run, one attempt at a task from grant to hand-in,
-- release or lapse; its id is the lease's. The lease keeps who, which machine, start, end and state;
-- `runs` adds what the agent reports while it holds the lease (usage, summed from increments: each
-- report is a write under an Idempotency-Key, so a replay is answered from the stored response and
-- never counted twice), and `run_log` its log lines, bounded per run. A run's row appears with its
-- first report; a lease without one used nothing it reported.
CREATE TABLE runs (
  lease_id text PRIMARY KEY REFERENCES leases(id),
  input_tokens bigint NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
  output_tokens bigint NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
  cost_micros bigint NOT NULL DEFAULT 0 CHECK (cost_micros >= 0),
  currency text,
  model text,
  tool_calls bigint NOT NULL DEFAULT 0 CHECK (tool_calls >= 0),
  reports integer NOT NULL DEFAULT 0,
  log_lines integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL
);

CREATE TABLE run_log (
  lease_id text NOT NULL REFERENCES runs(lease_id),
  seq integer NOT NULL,
  at timestamptz NOT NULL,
  level text NOT NULL CHECK (level IN ('info', 'warn', 'error')),
  line text NOT NULL,
  PRIMARY KEY (lease_id, seq)
);

-- Runs per agent (runs_list): a holder's leases, newest first (lease ids are ULIDs, in grant order).
CREATE INDEX leases_holder_id ON leases (holder_id, id);
