-- A workspace's chat channel (issue 40: "for a workspace's channel"): a Slack-compatible incoming
-- webhook its notifications go to; null: the server's (BATON_CHAT_WEBHOOK_URL). Expand only.
ALTER TABLE workspaces ADD COLUMN chat_webhook_url text;
