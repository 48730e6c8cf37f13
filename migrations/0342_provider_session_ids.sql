-- Back-channel logout (spec/identity.md, "Signing out at the provider"): a session opened by single
-- sign-on keeps the provider's session id (the ID token's `sid`), so the provider's logout token can
-- name the sessions to end. Expand step: a new nullable column and a partial index; the release
-- before this one never reads it, and its INSERTs leave it null.
ALTER TABLE sessions ADD COLUMN provider_session_id text;
CREATE INDEX sessions_provider_session ON sessions (issuer, provider_session_id) WHERE provider_session_id IS NOT NULL AND ended_at IS NULL;
