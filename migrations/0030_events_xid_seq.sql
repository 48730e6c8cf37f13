-- Commit-ordered events without a global lock (store/events.ts). An event's seq is now its writing
-- transaction's id (xid8) times 2^20, plus its ordinal within that transaction, so seq order is
-- transaction-id order. Readers that move a cursor read only below the oldest transaction still in
-- progress (pg_snapshot_xmin): every transaction with a smaller id has ended, so no event can ever
-- appear below a seq a reader has passed. Writes to different tasks no longer queue on one lock.
-- Seqs already stored (a plain counter) stay below the new ones: a transaction id is at least the
-- number of transactions that ran, and each of those wrote fewer than 2^20 events.
ALTER TABLE events ALTER COLUMN seq DROP IDENTITY IF EXISTS;
-- The store computes seq in the append itself; a row written any other way is refused.
ALTER TABLE events ALTER COLUMN seq SET NOT NULL;
