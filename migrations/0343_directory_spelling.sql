-- The directory's `prefix` (spec/identity.md, "The directory"): a name as a mention spells it,
-- lowercased with each space `_`, kept in a column of its own, in byte order (`C`) so that a prefix
-- is a range, and indexed per workspace for that range and for equality (the directory's `handle`
-- check), which scanned every principal before. A column, not an index on the expression: under
-- row-level security a condition that calls `lower()` (not leakproof) is applied after the
-- workspace's policy, row by row, and never reaches an expression index.
-- Expand step: a generated column (the release before this one neither writes nor reads it; its
-- INSERTs fill it) and an index. Adding it rewrites `agents`, one row per principal: moments even
-- for a fleet of tens of thousands.
ALTER TABLE agents ADD COLUMN spelling text COLLATE "C" GENERATED ALWAYS AS (lower(replace(name, ' ', '_'))) STORED;
CREATE INDEX agents_spelling ON agents (workspace_id, spelling);
