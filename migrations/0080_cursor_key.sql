-- The key that signs list cursors (issue 36 item 9; spec/api.md, "Pagination"): 32 random bytes,
-- made once here, so every instance on this database signs and checks cursors alike, whether or not
-- BATON_SECRET_KEY is set. A cursor only names a position in a list its caller may read anyway, so
-- the key guards the server against forged input, not data: reading it from the database grants
-- nothing the API does not. (gen_random_uuid is PostgreSQL's strong random source: 2 x 122 bits.)
CREATE TABLE server_keys (
  purpose    text PRIMARY KEY,
  key        bytea NOT NULL CHECK (length(key) >= 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO server_keys (purpose, key) VALUES ('cursors', uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));
