import { describe, expect, it } from 'vitest';
import { chatFormat } from './notification-messages.ts';

describe('chatFormat', () => {
  it.each([
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'slack'],
    ['https://chat.example.com/hooks/abc123', 'slack'],
    ['https://discord.com/api/webhooks/123456789012345678/tok_en-1', 'discord'],
    ['https://discord.com/api/v10/webhooks/123456789012345678/tok_en-1', 'discord'],
    // Discord's Slack-compatible endpoint takes Slack's body.
    ['https://discord.com/api/webhooks/123456789012345678/tok_en-1/slack', 'slack'],
    ['https://contoso.webhook.office.com/webhookb2/6f1c@72f9/IncomingWebhook/0c3e/9a1b', 'teams'],
    ['https://prod-21.westeurope.logic.azure.com:443/workflows/8f2c1e0d7b/triggers/manual/paths/invoke?api-version=2016-06-01&sig=s1g', 'teams'],
    ['https://default1a2b.3c.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/8f2c1e0d7b/triggers/manual/paths/invoke?api-version=1', 'teams'],
    ['not a url', 'slack'],
  ] as const)('%s speaks %s', (url, format) => {
    expect(chatFormat(url)).toBe(format);
  });
});
