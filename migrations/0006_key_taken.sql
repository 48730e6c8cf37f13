-- Raised by a write's last statement when its idempotency key turned out to be stored already by a
-- concurrent request: the statement fails instead of storing nothing, so the COMMIT sent with it
-- (src/store/prepared-client.ts, THEN_COMMIT) never runs and the write rolls back.
CREATE FUNCTION baton_key_taken() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'idempotency key already stored by a concurrent request' USING ERRCODE = 'BK001';
END $$;
