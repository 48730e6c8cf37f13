-- Single sign-on, sessions and roles (issue 39 §1–§3, spec/identity.md).

-- A human's role names the set of scopes it was given (src/domain/roles.ts); agents have none,
-- and a human made by agents_create keeps none until an admin sets one. The bootstrap admin is
-- the owner; other humans holding agents:admin are admins, the rest members.
ALTER TABLE agents ADD COLUMN role text CHECK (role IN ('owner', 'admin', 'member', 'viewer'));
ALTER TABLE agents ADD CONSTRAINT agents_role_human CHECK (role IS NULL OR kind = 'human');
UPDATE agents SET role = CASE
    WHEN created_by_kind = 'system' AND external_id IS NULL AND 'agents:admin' = ANY (scopes) THEN 'owner'
    WHEN 'agents:admin' = ANY (scopes) THEN 'admin'
    ELSE 'member' END
  WHERE kind = 'human';

-- Who a person is at an OpenID provider: the issuer and subject of their ID tokens, never the
-- email (which a provider may reassign).
CREATE TABLE oidc_identities (
  issuer text NOT NULL,
  subject text NOT NULL,
  agent_id text NOT NULL REFERENCES agents (id),
  email text,
  created_at timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_identities_agent ON oidc_identities (agent_id);

-- A cookie session. Each is backed by a token row of its own (machine `session`, every scope, so
-- the person's scopes govern) whose token_hash is the SHA-256 of the cookie's secret: the secret
-- itself is stored nowhere, and everything keyed by a token (rate windows, leases, event
-- provenance, approvals) works for sessions unchanged. The token's expires_at is the absolute
-- timeout; last_seen_at drives the idle timeout.
CREATE TABLE sessions (
  id text PRIMARY KEY,
  token_id text NOT NULL UNIQUE REFERENCES tokens (id),
  agent_id text NOT NULL REFERENCES agents (id),
  user_agent text NOT NULL,
  issuer text,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  ended_at timestamptz,
  end_reason text CHECK (end_reason IN ('signed_out', 'revoked', 'idle', 'disabled'))
);
CREATE INDEX sessions_agent ON sessions (agent_id, id);
