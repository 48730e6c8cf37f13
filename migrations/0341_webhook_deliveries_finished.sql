-- The delivery log's retention (BATON_WEBHOOK_DELIVERY_RETENTION_DAYS, spec/realtime.md "The delivery
-- log"): the pruning pass deletes finished deliveries (delivered or failed) by the time of their last
-- attempt, a batch at a time. Without this index each batch would read the whole table, which a fleet
-- grows by millions of rows a day (bench/README.md, "Fleet").
-- Expand step: a new index; the release before this one never prunes deliveries and is unaffected.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE state <> 'pending';
