import type { LinkClaims } from '../notification-link.ts';
import type { NotificationSubject } from '../store/notifications.ts';
import { oneLine } from '../one-line.ts';

/** A link to put in a message: what it carries, signed by the caller (`NotificationLinks.url`). */
export type LinkMaker = (claims: Omit<LinkClaims, 'id' | 'exp' | 'to'> & { to: string }) => string;

export interface Email {
  readonly subject: string;
  readonly text: string;
}

/** The Slack incoming-webhook body; Mattermost and Rocket.Chat accept it as is (they read `text`). */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly object[];
}

/** Discord's own webhook body: `content` in its Markdown, and no mention may ping anyone. */
export interface DiscordMessage {
  readonly content: string;
  readonly allowed_mentions: { readonly parse: readonly [] };
}

/**
 * Microsoft Teams' body: a message with one Adaptive Card, what both of Teams' webhooks take (a
 * channel's incoming webhook and a Workflows "when a webhook request is received" flow). Text
 * people wrote is in `TextRun`s, which Teams shows as written: no Markdown, no mention.
 */
export interface TeamsMessage {
  readonly type: 'message';
  readonly attachments: readonly [{ readonly contentType: 'application/vnd.microsoft.card.adaptive'; readonly contentUrl: null; readonly content: object }];
}

/** The chat formats Baton speaks, told apart by the webhook URL (spec/notifications.md). */
export type ChatFormat = 'slack' | 'discord' | 'teams';

/**
 * Told apart by the URL's path, on the service's own hosts or a server that copies its API:
 * Discord's execute-webhook path (`/api[/vN]/webhooks/{id}/{token}`) gets Discord's format;
 * Teams' incoming webhook (`/webhookb2/…`) and a Workflows trigger (`/workflows/{id}/triggers/…`,
 * or Power Platform's `/powerautomate/automations/direct/workflows/…`) get an Adaptive Card;
 * everything else, Discord's `/slack` endpoint included, gets Slack's body.
 */
export function chatFormat(url: string): ChatFormat {
  const path = URL.parse(url)?.pathname ?? '';
  if (/^\/api(\/v\d+)?\/webhooks\/\d+\/[\w-]+\/?$/.test(path)) return 'discord';
  if (/^\/webhookb2\//.test(path) || /\/workflows\/[\w-]+\/triggers\//.test(path) || /^\/powerautomate\/automations\/direct\/workflows\//.test(path)) return 'teams';
  return 'slack';
}

const KIND_WORDS: Record<NotificationSubject['kind'], string> = {
  ask: 'asks you',
  answer: 'answered your ask',
  mention: 'mentioned you',
  review: 'reviewed your hand-in',
  assigned: 'assigned you',
  approval: 'asks your approval',
  overdue: 'is still waiting',
  budget: 'ran down a budget',
  reply: 'replied',
  changed: 'changed a task assigned to you',
  to_review: 'handed in for your review',
};

/** The email about one item: for an ask, its question, deadline and a link per option that answers it. */
export function itemEmail(s: NotificationSubject, to: string, link: LinkMaker): Email {
  const open = link({ to, task: s.task_id, item: s.id });
  const lines = [`${s.by_name} ${KIND_WORDS[s.kind]} on "${s.title}":`, '', s.question ?? s.excerpt, ''];
  if (s.kind === 'ask' && s.due_at) lines.push(`Answer by ${s.due_at.toUTCString()}.`, '');
  lines.push(`Open it in Baton: ${open}`);
  if (s.kind === 'ask') {
    for (const [i, o] of (s.options ?? []).entries()) lines.push(`Answer "${o.label}": ${link({ to, task: s.task_id, item: s.id, ask: s.ref_id, option: i })}`);
  }
  lines.push('', 'Each link works once, for you only, after you sign in.');
  // An approval, an overdue wait or a budget says what waits (its excerpt) before the task's title.
  const about = s.question ?? (s.kind === 'approval' || s.kind === 'overdue' || s.kind === 'budget' ? `${s.excerpt} (${s.title})` : s.title);
  return { subject: `[Baton] ${s.by_name} ${KIND_WORDS[s.kind]}: ${oneLine(about, 80)}`, text: lines.join('\n') };
}

/** One email for a person's digest: a line and a link per item, oldest first. */
export function digestEmail(items: readonly NotificationSubject[], to: string, link: LinkMaker): Email {
  const sorted = [...items].sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  const lines = [`${sorted.length} new in your Baton inbox:`, ''];
  for (const s of sorted) {
    lines.push(`- ${s.by_name} ${KIND_WORDS[s.kind]} on "${s.title}": ${oneLine(s.question ?? s.excerpt, 200)}`, `  ${link({ to, task: s.task_id, item: s.id })}`);
  }
  lines.push('', 'Each link works once, for you only, after you sign in.');
  return { subject: `[Baton] ${sorted.length} new in your inbox`, text: lines.join('\n') };
}

/**
 * The chat message about an item (an ask, an approval, an overdue wait for its escalation target, a
 * budget): its title, who is asked, and the link. Everything people wrote (names, title, question)
 * is escaped for the format, so it can neither ping a channel nor make a link of its own; only
 * Baton's link is a link.
 */
export function chatMessage(s: NotificationSubject, to: string, link: LinkMaker, format: ChatFormat): SlackMessage | DiscordMessage | TeamsMessage {
  const url = link({ to, task: s.task_id, item: s.id });
  const verb = s.kind === 'ask' ? 'asks' : s.kind === 'approval' ? 'asks the approval of' : s.kind === 'overdue' ? 'is still waiting, overdue for' : s.kind === 'budget' ? 'ran down a budget, for' : KIND_WORDS[s.kind];
  const written = { by: s.by_name, principal: s.principal_name, title: oneLine(s.title, 200), what: oneLine(s.question ?? s.excerpt, 300) };
  if (format === 'teams') return teamsCard(written, verb, url);
  if (format === 'discord') {
    const d = mapValues(written, escapeDiscord);
    return { content: `**${d.by}** ${verb} **${d.principal}** on [${d.title}](${url}):\n> ${d.what}`, allowed_mentions: { parse: [] } };
  }
  const m = mapValues(written, escapeSlack);
  const text = `${m.by} ${verb} ${m.principal} on "${m.title}": ${m.what} ${url}`;
  const markdown = `*${m.by}* ${verb} *${m.principal}* on <${url}|${m.title}>:\n>${m.what}`;
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: markdown } }] };
}

/** The Adaptive Card: who asks whom on which task, what they wrote, and Baton's link as the card's one action. */
function teamsCard(w: { by: string; principal: string; title: string; what: string }, verb: string, url: string): TeamsMessage {
  const run = (text: string, bold = false) => ({ type: 'TextRun', text, ...(bold ? { weight: 'Bolder' } : {}) });
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body: [
      { type: 'RichTextBlock', inlines: [run(w.by, true), run(` ${verb} `), run(w.principal, true), run(' on '), run(w.title, true)] },
      { type: 'RichTextBlock', inlines: [{ ...run(w.what), italic: true }] },
    ],
    actions: [{ type: 'Action.OpenUrl', title: 'Open in Baton', url }],
  };
  return { type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }] };
}

function mapValues<T extends Record<string, string>>(values: T, f: (value: string) => string): T {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, f(v)])) as T;
}

/**
 * Slack's escapes (`&`, `<`, `>`: `<!channel>` or `<https://x|click>` would otherwise ping or
 * link), plus what Mattermost and Rocket.Chat, which render the same `text` as Markdown, would
 * act on: a word joiner after the `@` of `@channel`, `@here`, `@all` and `@everyone`, and between
 * `]` and `(` of a Markdown link. Slack shows both joiners as nothing.
 */
function escapeSlack(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@(channel|here|all|everyone)\b/gi, '@\u2060$1')
    .replace(/\]\(/g, ']\u2060(');
}

/** Discord Markdown's escapes: a backslash before every character that formats, links or quotes (mentions are off by `allowed_mentions`). */
function escapeDiscord(text: string): string {
  return text.replace(/[\\*_~`|[\]()<>#-]/g, '\\$&');
}
