import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import type { Principal } from '../harness.ts';
import { type Cluster, INSTANCES, startInstances, WORKER_SCOPES } from '../leases/instances.ts';
import { type ChatReceiver, type MailReceiver, startChatReceiver, startMailReceiver } from './receivers.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
const DIGEST_S = 3600;
const LINK_TTL_S = 2 * DIGEST_S;
let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
const advance = (s: number) => {
  at = new Date(at.getTime() + s * 1000);
};

let cluster: Cluster;
let smtp: MailReceiver;
let chat: ChatReceiver;
let agent: Principal;
beforeAll(async () => {
  smtp = await startMailReceiver();
  chat = await startChatReceiver();
  const notify = { smtpUrl: smtp.url, smtpFrom: 'Baton <baton@example.test>', chatWebhookUrl: chat.url, digestS: DIGEST_S, linkTtlS: LINK_TTL_S };
  cluster = await startInstances(INSTANCES, { cronSecret: CRON_SECRET, sweepIntervalMs: 0, webhookRetryScheduleMs: [0, 10_000, 60_000], notify }, clock);
  agent = await cluster.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
});
afterAll(async () => {
  await cluster?.close();
  await smtp?.close();
  await chat?.close();
});

/** A person with an email address (the identity provider sets it; here, the store). */
async function person(more: readonly Scope[] = []): Promise<Principal & { email: string; name: string }> {
  const p = await cluster.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', ...more] });
  const email = `${p.id.slice(-8).toLowerCase()}@example.test`;
  const row = await cluster.database.db.updateTable('agents').set({ email }).where('id', '=', p.id).returning('name').executeTakeFirstOrThrow();
  return { ...p, email, name: row.name };
}

/** The maintenance pass racing on every instance, twice: what is sent is sent once. */
async function sweep(): Promise<void> {
  const runs = await Promise.all([0, 1, 2, 3].map((i) => cluster.request('POST', '/cron/keepalive', { via: i % INSTANCES, token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } })));
  for (const run of runs) expect(run.status, run.body).toBe(200);
}

async function ask(to: string, title = 'Ship the release') {
  const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>();
  const body = { question: 'Which region first?', options: [{ label: 'eu' }, { label: 'us' }], to, timeout_s: 86_400, default: { option: 'eu' } };
  const res = await cluster.request('POST', `/api/v1/tasks/${task.id}/asks`, { body, token: agent.token });
  expect(res.status, res.body).toBe(201);
  return { task: task.id, ask: res.json<{ id: string }>().id };
}

const mailsTo = (email: string) => smtp.mails.filter((m) => m.to.includes(email));
const links = (text: string) => [...text.matchAll(/https?:\/\/\S+\?link=([\w.-]+)/g)].map((m) => m[1] ?? '');
const redeem = (token: string, as: Principal, via = 0) => cluster.request('POST', '/api/v1/links/redeem', { body: { token }, token: as.token, via });

describe('notifications', () => {
  it('an ask to a person is one email across instances, whose links each work once, for that person only', async () => {
    const p = await person();
    const { task, ask: askId } = await ask(p.id);
    await sweep();
    await sweep();
    const mails = mailsTo(p.email);
    expect(mails).toHaveLength(1);
    const mail = mails[0];
    expect(mail?.subject).toContain('Which region first?');
    expect(mail?.text).toContain('"Ship the release"');
    expect(mail?.text).toContain(`http://baton.test/tasks/${task}?link=`);
    const [open, eu, us] = links(mail?.text ?? '');
    expect([open, eu, us].every(Boolean)).toBe(true);
    // Someone else cannot use it, and trying does not use it up.
    const other = await person();
    const stolen = await redeem(us ?? '', other);
    expect(stolen.status, stolen.body).toBe(404);
    expect(stolen.json().code).toBe('link_invalid');
    const opened = await redeem(open ?? '', p);
    expect(opened.status, opened.body).toBe(200);
    expect(opened.json()).toMatchObject({ task_id: task, ask_id: null, answered: null });
    const answered = await redeem(us ?? '', p, INSTANCES - 1);
    expect(answered.status, answered.body).toBe(200);
    expect(answered.json()).toMatchObject({ task_id: task, ask_id: askId, answered: { id: askId, status: 'answered', answer: { option: 'us' } } });
    const again = await redeem(us ?? '', p);
    expect(again.status, again.body).toBe(409);
    expect(again.json()).toMatchObject({ code: 'link_used' });
    // The outbox says what happened, for admins.
    const outbox = await cluster.request('GET', `/api/v1/notifications?principal_id=${p.id}`);
    expect(outbox.status, outbox.body).toBe(200);
    const rows = outbox.json<{ data: { channel: string; state: string; digest: boolean; attempts: unknown[] }[] }>().data;
    expect(rows.map((r) => [r.channel, r.state, r.digest, r.attempts.length]).sort()).toEqual([
      ['chat', 'sent', false, 1],
      ['email', 'sent', false, 1],
    ]);
    expect((await cluster.request('GET', '/api/v1/notifications', { token: p.token })).status).toBe(403);
  });

  it('refuses an expired link', async () => {
    const p = await person();
    await ask(p.id);
    await sweep();
    const [open] = links(mailsTo(p.email)[0]?.text ?? '');
    advance(LINK_TTL_S + 1);
    const late = await redeem(open ?? '', p);
    expect(late.status, late.body).toBe(410);
    expect(late.json().code).toBe('link_expired');
  });

  it('posts an ask to the chat channel: the title, who is asked, and the link', async () => {
    const p = await person();
    const before = chat.bodies.length;
    const { task } = await ask(p.id, 'Rotate <the> keys');
    await sweep();
    expect(chat.bodies.slice(before)).toHaveLength(1);
    const body = chat.bodies[before] as { text: string; blocks: { type: string; text: { type: string; text: string } }[] };
    expect(body.text).toContain(p.name);
    // Slack reads `text` as mrkdwn too, so it carries the same escapes as the block.
    expect(body.text).toContain('Rotate &lt;the&gt; keys');
    expect(body.text).toContain(`http://baton.test/tasks/${task}?link=`);
    expect(body.blocks[0]?.type).toBe('section');
    expect(body.blocks[0]?.text.type).toBe('mrkdwn');
    expect(body.blocks[0]?.text.text).toContain('Rotate &lt;the&gt; keys');
    expect(body.blocks[0]?.text.text).toContain(`*${p.name}*`);
  });

  it('escapes what people wrote for Slack: no <!channel>, no disguised link, only Baton\'s link is a link (and it works)', async () => {
    const p = await person();
    const before = chat.bodies.length;
    const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: '<!channel> deploy @channel [click](https://evil.example) & go' } })).json<{ id: string }>();
    const question = '<https://evil.example|open the release> @here?';
    expect((await cluster.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question, to: p.id, timeout_s: 3600, default: { text: 'no' } }, token: agent.token })).status).toBe(201);
    await sweep();
    const body = chat.bodies[before] as { text: string; blocks: { text: { text: string } }[] };
    const markdown = body.blocks[0]?.text.text ?? '';
    for (const sent of [body.text, markdown]) {
      expect(sent).not.toContain('<!channel>');
      expect(sent).not.toContain('<https://evil');
      expect(sent).toContain('&lt;!channel&gt; deploy');
      expect(sent).toContain('&lt;https://evil.example|open the release&gt;');
      expect(sent).toContain('&amp; go');
      // Mattermost and Rocket.Chat render `text` as Markdown: no @channel or @here, no [text](url) link.
      expect(sent).not.toMatch(/@(channel|here)\b/);
      expect(sent).not.toContain('](');
    }
    // Slack's only <…> token in the block is Baton's link, titled with the escaped title.
    expect([...markdown.matchAll(/<([^>]*)>/g)].map((m) => m[1]?.split('|')[0])).toEqual([expect.stringMatching(`^http://baton.test/tasks/${task.id}\\?link=`)]);
    const [fromText] = links(body.text);
    const [fromBlock] = links(markdown);
    expect((await redeem(fromBlock ?? '', p)).status).toBe(200);
    expect(fromText).toBe(fromBlock);
  });

  it("speaks Discord's own format to a Discord webhook URL: allowed_mentions empty, Markdown escaped, Baton's link masked", async () => {
    const discord = await startChatReceiver('/api/webhooks/123456789012345678/tok_en-1');
    try {
      const made = (await cluster.request('POST', '/api/v1/workspaces', { body: { name: 'Discord team' } })).json<{ owner_id: string; token: string }>();
      expect((await cluster.request('PATCH', '/api/v1/workspaces/current', { body: { chat_webhook_url: discord.url }, token: made.token })).status).toBe(200);
      const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: '@everyone deploy [click](https://evil.example) **now**' }, token: made.token })).json<{ id: string }>();
      const bot = (await cluster.request('POST', '/api/v1/agents', { body: { name: 'discord-bot', scopes: ['tasks:read', 'tasks:write'] }, token: made.token })).json<{ id: string }>();
      const botToken = (await cluster.request('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'm' }, token: made.token })).json<{ token: string }>().token;
      const asked = await cluster.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question: 'Ping <@&1234> and @here?', to: made.owner_id, timeout_s: 3600, default: { text: 'no' } }, token: botToken });
      expect(asked.status, asked.body).toBe(201);
      await sweep();
      expect(discord.bodies).toHaveLength(1);
      const body = discord.bodies[0] as { content: string; allowed_mentions: unknown; text?: unknown };
      expect(body.allowed_mentions).toEqual({ parse: [] });
      expect(body.text).toBeUndefined();
      expect(body.content).toContain('@everyone deploy \\[click\\]\\(https://evil.example\\) \\*\\*now\\*\\*');
      expect(body.content).toContain('Ping \\<@&1234\\> and @here?');
      // The one unescaped [text](url) is Baton's link, and it opens the item for the person asked.
      const masked = [...body.content.matchAll(/(?<!\\)\[(?:[^\]\\]|\\.)*\]\(([^)]*)\)/g)].map((m) => m[1]);
      expect(masked).toEqual([expect.stringMatching(`^http://baton.test/tasks/${task.id}\\?link=`)]);
      const redeemed = await cluster.request('POST', '/api/v1/links/redeem', { body: { token: links(body.content)[0] ?? '' }, token: made.token });
      expect(redeemed.status, redeemed.body).toBe(200);
    } finally {
      await discord.close();
    }
  });

  it('posts an Adaptive Card to a Microsoft Teams webhook (a Workflows trigger, answering 202): what people wrote shown as written, Baton\'s link its one action', async () => {
    const teams = await startChatReceiver('/workflows/8f2c1e0d7b/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sig=s1g');
    teams.status = 202;
    try {
      const made = (await cluster.request('POST', '/api/v1/workspaces', { body: { name: 'Teams team' } })).json<{ owner_id: string; token: string }>();
      expect((await cluster.request('PATCH', '/api/v1/workspaces/current', { body: { chat_webhook_url: teams.url }, token: made.token })).status).toBe(200);
      const title = '@everyone deploy [click](https://evil.example) **now**';
      const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title }, token: made.token })).json<{ id: string }>();
      const bot = (await cluster.request('POST', '/api/v1/agents', { body: { name: 'teams-bot', scopes: ['tasks:read', 'tasks:write'] }, token: made.token })).json<{ id: string }>();
      const botToken = (await cluster.request('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'm' }, token: made.token })).json<{ token: string }>().token;
      const question = 'Ping <at>General</at> and _all_ of @here?';
      const asked = await cluster.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question, to: made.owner_id, timeout_s: 3600, default: { text: 'no' } }, token: botToken });
      expect(asked.status, asked.body).toBe(201);
      await sweep();
      expect(teams.bodies).toHaveLength(1);
      const body = teams.bodies[0] as { type: string; text?: unknown; attachments: { contentType: string; content: { type: string; body: { type: string; inlines: { type: string; text: string }[] }[]; actions: { type: string; title: string; url: string }[] } }[] };
      expect(body.type).toBe('message');
      expect(body.text).toBeUndefined();
      expect(body.attachments.map((a) => a.contentType)).toEqual(['application/vnd.microsoft.card.adaptive']);
      const card = body.attachments[0]?.content;
      expect(card?.type).toBe('AdaptiveCard');
      // Only RichTextBlocks of TextRuns, which Teams shows as written (a TextBlock would read Markdown): no link, bold or mention of anyone's making.
      expect(card?.body.map((b) => b.type)).toEqual(['RichTextBlock', 'RichTextBlock']);
      const runs = card?.body.flatMap((b) => b.inlines) ?? [];
      expect(runs.every((r) => r.type === 'TextRun')).toBe(true);
      expect(runs.map((r) => r.text)).toEqual(['teams-bot', ' asks ', expect.any(String) as unknown, ' on ', title, question]);
      expect(JSON.stringify(card)).not.toContain('msteams');
      // Baton's link is the card's one action, and it opens the item for the person asked.
      expect(card?.actions).toEqual([{ type: 'Action.OpenUrl', title: 'Open in Baton', url: expect.stringMatching(`^http://baton.test/tasks/${task.id}\\?link=`) as unknown }]);
      const redeemed = await cluster.request('POST', '/api/v1/links/redeem', { body: { token: links(card?.actions[0]?.url ?? '')[0] ?? '' }, token: made.token });
      expect(redeemed.status, redeemed.body).toBe(200);
      // 202 is delivered: the message is not sent again.
      await sweep();
      expect(teams.bodies).toHaveLength(1);
    } finally {
      await teams.close();
    }
  });

  it("posts a workspace's asks to the workspace's own chat channel, whose URL only its admins read", async () => {
    const own = await startChatReceiver();
    try {
      const made = (await cluster.request('POST', '/api/v1/workspaces', { body: { name: 'Chat team' } })).json<{ owner_id: string; token: string }>();
      const set = await cluster.request('PATCH', '/api/v1/workspaces/current', { body: { chat_webhook_url: own.url }, token: made.token });
      expect(set.status, set.body).toBe(200);
      expect(set.json()).toMatchObject({ settings: { chat_webhook_url: own.url }, effective: { chat_webhook_url: own.url } });
      const bot = (await cluster.request('POST', '/api/v1/agents', { body: { name: 'chat-team-bot', scopes: ['tasks:read', 'tasks:write'] }, token: made.token })).json<{ id: string }>();
      const botToken = (await cluster.request('POST', `/api/v1/agents/${bot.id}/tokens`, { body: { machine: 'm' }, token: made.token })).json<{ token: string }>().token;
      const seen = (await cluster.request('GET', '/api/v1/workspaces/current', { token: botToken })).json<{ settings: { chat_webhook_url: string } }>();
      expect(seen.settings.chat_webhook_url).toBe(`${new URL(own.url).origin}/...`);

      const serverBefore = chat.bodies.length;
      const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: 'Chat team task' }, token: botToken })).json<{ id: string }>();
      const asked = await cluster.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question: 'Go?', to: made.owner_id, timeout_s: 3600, default: { text: 'no' } }, token: botToken });
      expect(asked.status, asked.body).toBe(201);
      await sweep();
      expect(own.bodies).toHaveLength(1);
      expect((own.bodies[0] as { text: string }).text).toContain('Chat team task');
      expect(chat.bodies.slice(serverBefore).map((b) => (b as { text: string }).text).join('\n')).not.toContain('Chat team task');
    } finally {
      await own.close();
    }
  });

  it('retries an email the SMTP server refused, with back-off, and records each attempt', async () => {
    const p = await person();
    smtp.failNext = 1;
    await ask(p.id);
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(0);
    const outbox = async () =>
      (await cluster.request('GET', `/api/v1/notifications?principal_id=${p.id}&channel=email`)).json<{ data: { state: string; attempts: { status: number | null; error: string | null }[] }[] }>().data[0];
    expect(await outbox()).toMatchObject({ state: 'pending', attempts: [{ status: 451 }] });
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(0);
    advance(12);
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(1);
    const row = await outbox();
    expect(row?.state).toBe('sent');
    expect(row?.attempts.map((a) => a.error === null)).toEqual([false, true]);
  });

  it('respects preferences: email off, chat off, everything in the digest', async () => {
    const p = await person();
    const prefs = (await cluster.request('GET', '/api/v1/preferences/notifications', { token: p.token })).json();
    expect(prefs).toEqual({ email: 'immediate', chat: true, updated_at: null });
    const off = await cluster.request('PATCH', '/api/v1/preferences/notifications', { body: { email: 'off', chat: false }, token: p.token });
    expect(off.status, off.body).toBe(200);
    expect(off.json()).toMatchObject({ email: 'off', chat: false });
    const chatBefore = chat.bodies.length;
    await ask(p.id);
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(0);
    expect(chat.bodies.length).toBe(chatBefore);
    await cluster.request('PATCH', '/api/v1/preferences/notifications', { body: { email: 'digest' }, token: p.token });
    await ask(p.id, 'Digest me');
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(0);
    advance(DIGEST_S);
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(1);
    expect(mailsTo(p.email)[0]?.text).toContain('"Digest me"');
  });

  it('gathers the rest of the inbox in one digest per person once its oldest item is due', async () => {
    const p = await person();
    const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: 'Write the notes' } })).json<{ id: string }>();
    for (const body of [`@${p.name} please look`, `@${p.name} and again`]) {
      expect((await cluster.request('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body }, token: agent.token })).status).toBe(201);
      advance(60);
    }
    const assigned = await cluster.request('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: p.id }, token: agent.token });
    expect(assigned.status, assigned.body).toBe(200);
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(0);
    advance(DIGEST_S - 120);
    await sweep();
    const mails = mailsTo(p.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe('[Baton] 3 new in your inbox');
    expect(mails[0]?.text).toContain('please look');
    expect(mails[0]?.text).toContain('and again');
    expect(mails[0]?.text).toContain('assigned you');
    expect(links(mails[0]?.text ?? '')).toHaveLength(3);
    await sweep();
    expect(mailsTo(p.email)).toHaveLength(1);
  });

  it('an approval of a task operation is an inbox item and an email at once for each person who may decide it; deciding closes the items', async () => {
    const decider = await person(['approvals:decide']);
    const bystander = await person();
    const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: 'Old branch' } })).json<{ id: string }>();
    const requested = await cluster.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token });
    expect(requested.status, requested.body).toBe(202);
    const approval = requested.json<{ id: string }>().id;
    const inboxOf = async (p: Principal) => (await cluster.request('GET', '/api/v1/inbox?kind=approval', { token: p.token })).json<{ data: { ref_id: string; state: string; task_id: string }[] }>().data;
    expect(await inboxOf(decider)).toEqual([expect.objectContaining({ ref_id: approval, state: 'unread', task_id: task.id })]);
    expect(await inboxOf(bystander)).toEqual([]);
    await sweep();
    const mails = mailsTo(decider.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toContain('asks your approval: Approve tasks_delete?');
    expect(mails[0]?.text).toContain(`http://baton.test/tasks/${task.id}?link=`);
    const denied = await cluster.request('POST', `/api/v1/approvals/${approval}/deny`, { token: decider.token, body: {} });
    expect(denied.status, denied.body).toBe(200);
    expect(await inboxOf(decider)).toEqual([expect.objectContaining({ ref_id: approval, state: 'done' })]);
  });

  it('a budget at 80 % is an email at once and a chat post for each person who may raise it (spec/runs.md, Budgets)', async () => {
    const lead = await person(['agents:admin']);
    const bystander = await person();
    const worker = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const made = await cluster.request('POST', '/api/v1/budgets', { body: { name: 'nightly', applies_to: 'agent', target: worker.id, unit: 'tokens', period: 'day', limit: 100 } });
    expect(made.status, made.body).toBe(201);
    const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: 'Nightly build' } })).json<{ id: string }>();
    const lease = (await cluster.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: worker.token })).json<{ lease: { id: string } }>().lease.id;
    expect((await cluster.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: 85 }, token: worker.token })).status).toBe(200);
    await sweep();
    const [mail, ...more] = mailsTo(lead.email);
    expect(more).toEqual([]);
    // The subject (MIME-encoded here: it is cut with an ellipsis) says the same as the text.
    expect(mail?.text).toContain(`ran down a budget on "Nightly build":\n\nBudget "nightly" (agent ${worker.id}) is at 85 %: 85 tokens of 100 tokens spent; it resets at `);
    expect(mail?.text).toContain(`http://baton.test/tasks/${task.id}?link=`);
    expect(mailsTo(bystander.email)).toEqual([]);
    expect(JSON.stringify(chat.bodies)).toContain(`ran down a budget, for ${lead.name} on \\"Nightly build\\"`);
  });

  it('an approval that expires undecided has its items marked done by the maintenance pass, once, on any instance', async () => {
    const decider = await person(['approvals:decide']);
    const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: 'Stale branch' } })).json<{ id: string }>();
    const requested = await cluster.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token });
    expect(requested.status, requested.body).toBe(202);
    const approval = requested.json<{ id: string; expires_at: string }>();
    const itemOf = async () => (await cluster.request('GET', '/api/v1/inbox?kind=approval&state=unread,read,done', { token: decider.token })).json<{ data: { ref_id: string; state: string }[] }>().data.filter((i) => i.ref_id === approval.id);
    await sweep();
    expect(await itemOf()).toEqual([expect.objectContaining({ state: 'unread' })]);
    at = new Date(Date.parse(approval.expires_at) + 1000);
    expect((await cluster.request('GET', `/api/v1/approvals/${approval.id}`)).json()).toMatchObject({ status: 'expired' });
    await sweep();
    expect(await itemOf()).toEqual([expect.objectContaining({ state: 'done' })]);
  });
});
