-- When the auth provider last changed this human (its user object's updated_at, else the signed
-- delivery time), so deliveries arriving out of order never move the principal back to an older state.
ALTER TABLE agents ADD COLUMN external_updated_at timestamptz;
