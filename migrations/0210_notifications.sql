-- Notifications by email and chat (issue 40 §4, spec/notifications.md). Expand only: new tables.

-- A person's choices; no row means the defaults (email: immediate, chat: on).
CREATE TABLE notification_preferences (
  principal_id text PRIMARY KEY REFERENCES agents (id),
  -- immediate: asks at once, the rest in the digest; digest: everything in the digest; off: no email.
  email        text NOT NULL DEFAULT 'immediate' CHECK (email IN ('immediate', 'digest', 'off')),
  chat         boolean NOT NULL DEFAULT true,
  updated_at   timestamptz NOT NULL
);

-- The outbox: one row per inbox item and channel, written in the transaction that wrote the item,
-- so nothing is lost; workers claim due rows with SKIP LOCKED, so nothing is sent twice.
CREATE TABLE notifications (
  inbox_item_id   text NOT NULL,
  channel         text NOT NULL CHECK (channel IN ('email', 'chat')),
  principal_id    text NOT NULL REFERENCES agents (id),
  -- Email only: sent with the person's other digest items once the oldest is BATON_NOTIFY_DIGEST_S old.
  digest          boolean NOT NULL,
  -- skipped: the channel is not configured on the server that took it.
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'skipped')),
  attempt_count   integer NOT NULL DEFAULT 0,
  attempts        jsonb NOT NULL DEFAULT '[]',
  next_attempt_at timestamptz NOT NULL,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  PRIMARY KEY (inbox_item_id, channel)
);
-- What the worker claims: pending rows by due time.
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE state = 'pending';
-- A person's pending digest, gathered when the first of it is due.
CREATE INDEX notifications_digest ON notifications (principal_id) WHERE state = 'pending' AND digest;

-- Links in notifications are single use: a link's id is recorded here when it is used.
CREATE TABLE notification_links_used (
  link_id      text PRIMARY KEY,
  principal_id text NOT NULL,
  used_at      timestamptz NOT NULL
);
