// Outgoing webhook bots called about the messages that trigger them, against a local HTTP server,
// by the real server's rules (zerver/lib/outgoing_webhook.py, OutgoingWebhookWorker; tests:
// test_outgoing_webhook_system.py, test_outgoing_webhook_interfaces.py).
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { makeChannel } from './drafts-helpers.js';
import { OutgoingWebhookWorker } from '../../src/services/outgoing-webhooks/worker.js';
import { ZULIP_VERSION } from '../../src/version.js';

interface Received { headers: http.IncomingHttpHeaders; body: string }
type Answer = { status?: number; body?: string; json?: unknown } | 'hang' | 'drop';

/** A webhook endpoint on loopback: records each request and answers with `answer`. */
async function endpoint(t: Test, answer: () => Answer) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      const a = answer();
      if (a === 'hang') return;
      if (a === 'drop') return void req.socket.destroy();
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
      res.end(a.json !== undefined ? JSON.stringify(a.json) : a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

async function outgoingBot(s: TestServer, owner: TestUser, url: string, extra: Record<string, unknown> = {}) {
  const r = await s.api('POST', '/bots', owner, { full_name: 'Outgoing Bot', short_name: 'outgoing', bot_type: 3, payload_url: JSON.stringify(url), ...extra });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return { id: r.body.user_id as number, email: `outgoing-bot@${new URL((await s.platform.db.selectFrom('realms').select('url').executeTakeFirstOrThrow()).url).hostname}` };
}

const send = async (s: TestServer, who: TestUser, params: Record<string, unknown>) => {
  const r = await s.api('POST', '/messages', who, params);
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.id as number;
};

/**
 * The server's own worker stopped, one of the test's: runOnce then answers what it delivered
 * (the server's worker would have delivered the triggers already on its own).
 */
async function ownWorker(s: TestServer, options: { timeoutMs?: number; allowPrivateNetworks?: boolean } = {}) {
  await s.outgoingWebhooks.stop();
  return new OutgoingWebhookWorker(s.platform, true, { allowPrivateNetworks: true, ...options });
}

/** The newest messages `who` can see, oldest first. */
async function newest(s: TestServer, who: TestUser, count: number, narrow: unknown[] = []) {
  const r = await s.api('GET', '/messages', who, { anchor: 'newest', num_before: count, num_after: 0, narrow, apply_markdown: false, client_gravatar: false });
  return r.body.messages as Array<Record<string, any>>;
}

t.test('a mention in a channel: the generic payload, and the reply in the same topic', async (t) => {
  let answer: Answer = { json: { content: "Hidley ho, I'm a webhook responding!" } };
  const hook = await endpoint(t, () => answer);
  const s = await startTestServer(t, { outgoingWebhooksAllowPrivateNetworks: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const bot = await outgoingBot(s, alice, hook.url);
  const worker = await ownWorker(s);
  const token = (await s.platform.db.selectFrom('bot_services').select('token').executeTakeFirstOrThrow()).token;
  // The bot is not subscribed: a mention is enough.
  const denmark = await makeChannel(s, 'Denmark', { subscribers: [alice.id, bob.id] });

  const id = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** foo' });
  t.same(await worker.runOnce(), ['replied']);
  t.equal(hook.received.length, 1);
  const request = hook.received[0]!;
  t.equal(request.headers['content-type'], 'application/json');
  t.equal(request.headers['user-agent'], `ZulipOutgoingWebhook/${ZULIP_VERSION}`);
  const payload = JSON.parse(request.body);
  t.same(Object.keys(payload).sort(), ['bot_email', 'bot_full_name', 'data', 'message', 'token', 'trigger']);
  t.match(payload, { bot_email: bot.email, bot_full_name: 'Outgoing Bot', data: '@**Outgoing Bot** foo', token, trigger: 'mention' });
  // The message as GET /messages shows it in raw Markdown, with its rendered content, and no flags.
  const [shown] = await newest(s, bob, 1, [{ operator: 'id', operand: id }]);
  const { flags: _flags, ...expected } = shown!;
  t.same(payload.message, { ...expected, rendered_content: `<p><span class="user-mention" data-user-id="${bot.id}">@Outgoing Bot</span> foo</p>` });
  t.same(Object.keys(payload.message).sort(), ['avatar_url', 'client', 'content', 'content_type', 'display_recipient', 'id', 'is_me_message', 'reactions',
    'recipient_id', 'rendered_content', 'sender_email', 'sender_full_name', 'sender_id', 'sender_realm_str', 'stream_id', 'subject', 'submessages',
    'timestamp', 'topic_links', 'type'], 'the real server\'s fields (test_make_request)');
  t.match(payload.message, { type: 'stream', stream_id: denmark, display_recipient: 'Denmark', subject: 'bar', sender_id: bob.id, content_type: 'text/x-markdown' });

  const [reply] = await newest(s, bob, 1);
  t.match(reply, { sender_id: bot.id, type: 'stream', display_recipient: 'Denmark', subject: 'bar', content: "Hidley ho, I'm a webhook responding!", client: 'OutgoingWebhookResponse' });
  t.same(await s.platform.db.selectFrom('outgoing_webhook_jobs').selectAll().execute(), [], 'the trigger is answered');
  t.same(await worker.runOnce(), [], 'and never called again');

  // What triggers nothing: no mention, a silent mention, a mention in code, the bot's own message.
  await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: 'no mention here' });
  await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@_**Outgoing Bot** silently' });
  await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '`@**Outgoing Bot**`' });
  const botUser = { id: bot.id, email: bot.email, apiKey: '', auth: '' };
  const botKey = (await s.platform.db.selectFrom('users').select('api_key').where('id', '=', bot.id).executeTakeFirstOrThrow()).api_key;
  botUser.auth = `Basic ${Buffer.from(`${bot.email}:${botKey}`).toString('base64')}`;
  await send(s, botUser, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** talking to myself' });
  await send(s, botUser, { type: 'private', to: JSON.stringify([alice.id]), content: 'a bot\'s direct message' });
  await worker.runOnce();
  t.equal(hook.received.length, 1, 'no further request');

  // response_not_required, and an empty content: no reply.
  answer = { json: { response_not_required: true, content: 'unsaid' } };
  const quiet = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** hush' });
  t.same(await worker.runOnce(), ['no_reply']);
  answer = { json: '' };
  await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** hush again' });
  t.same(await worker.runOnce(), ['no_reply']);
  t.equal(hook.received.length, 3);
  t.equal((await newest(s, bob, 1))[0]!.content, '@**Outgoing Bot** hush again', 'the bot said nothing');
  t.ok(quiet);
});

t.test('direct messages: one to one and in a group, and the Slack interface', async (t) => {
  const hook = await endpoint(t, () => ({ json: { response_string: 'Hello from the webhook' } }));
  const s = await startTestServer(t, { outgoingWebhooksAllowPrivateNetworks: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const bot = await outgoingBot(s, alice, hook.url);
  const worker = await ownWorker(s);

  const id = await send(s, bob, { type: 'private', to: JSON.stringify([bot.id]), content: 'foo' });
  t.same(await worker.runOnce(), ['replied']);
  const payload = JSON.parse(hook.received[0]!.body);
  t.match(payload, { trigger: 'direct_message', data: 'foo', message: { id, type: 'private', content: 'foo' } });
  t.same(payload.message.display_recipient.map((r: { id: number }) => r.id).sort(), [bob.id, bot.id].sort());
  const [reply] = await newest(s, bob, 1);
  t.match(reply, { sender_id: bot.id, type: 'private', content: 'Hello from the webhook' });
  t.same(reply!.display_recipient.map((r: { id: number }) => r.id).sort(), [bob.id, bot.id].sort(), 'answered in the same conversation');

  await send(s, bob, { type: 'private', to: JSON.stringify([alice.id, bot.id]), content: 'group hello' });
  t.same(await worker.runOnce(), ['replied']);
  const [groupReply] = await newest(s, alice, 1);
  t.match(groupReply, { sender_id: bot.id, content: 'Hello from the webhook' });
  t.same(groupReply!.display_recipient.map((r: { id: number }) => r.id).sort(), [alice.id, bob.id, bot.id].sort((a, b) => a - b), 'to the whole group');

  // Slack: a form, channel messages only.
  const slackHook = await endpoint(t, () => ({ json: { text: 'slack says hi' } }));
  const slack = (await s.api('POST', '/bots', alice, { full_name: 'Slack Bot', short_name: 'slack', bot_type: 3, payload_url: JSON.stringify(slackHook.url), interface_type: 2 })).body.user_id as number;
  const channel = await makeChannel(s, 'general', { subscribers: [alice.id, bob.id] });
  const sent = await send(s, bob, { type: 'stream', to: 'general', topic: 'slack', content: '@**Slack Bot** ping' });
  t.same(await worker.runOnce(), ['replied']);
  t.equal(slackHook.received[0]!.headers['content-type'], 'application/x-www-form-urlencoded');
  const form = Object.fromEntries(new URLSearchParams(slackHook.received[0]!.body));
  const token = (await s.platform.db.selectFrom('bot_services').select('token').where('user_id', '=', slack).executeTakeFirstOrThrow()).token;
  const timestamp = (await newest(s, bob, 1, [{ operator: 'id', operand: sent }]))[0]!.timestamp;
  t.same(form, {
    token, team_id: 'T1', team_domain: new URL((await s.platform.db.selectFrom('realms').select('url').executeTakeFirstOrThrow()).url).host,
    channel_id: `C${channel}`, channel_name: 'general', thread_ts: String(timestamp), timestamp: String(timestamp), user_id: `U${bob.id}`,
    user_name: 'Bob', text: '@**Slack Bot** ping', trigger_word: 'mention', service_id: String(slack),
  });
  t.match((await newest(s, bob, 1))[0], { sender_id: slack, subject: 'slack', content: 'slack says hi' });
  await send(s, bob, { type: 'private', to: JSON.stringify([slack]), content: 'dm to slack' });
  t.same(await worker.runOnce(), ['failed']);
  t.equal(slackHook.received.length, 1, 'no request for a direct message');
  t.match((await newest(s, bob, 1))[0], { sender_id: slack, type: 'private', content: "Failure! Slack outgoing webhooks don't support direct messages." });
});

t.test('failures: the notices in the conversation and to the owner', async (t) => {
  let answer: Answer = { status: 500, body: 'oops' };
  const hook = await endpoint(t, () => answer);
  const s = await startTestServer(t, { outgoingWebhooksAllowPrivateNetworks: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const bot = await outgoingBot(s, alice, hook.url);
  const worker = await ownWorker(s);
  const denmark = await makeChannel(s, 'Denmark', { subscribers: [alice.id, bob.id] });
  const realmUrl = (await s.platform.db.selectFrom('realms').select('url').executeTakeFirstOrThrow()).url;
  const head = (id: number) => `[A message](${realmUrl}/#narrow/channel/${denmark}-Denmark/topic/bar/near/${id}) to your bot @_**Outgoing Bot** triggered an outgoing webhook.`;
  const lastTwo = async () => {
    const [inTopic, toOwner] = await newest(s, alice, 2);
    t.match(inTopic, { sender_id: bot.id, type: 'stream', subject: 'bar' });
    t.match(toOwner, { sender_id: bot.id, type: 'private' });
    t.same(toOwner!.display_recipient.map((r: { id: number }) => r.id).sort(), [alice.id, bot.id].sort(), 'a direct message to the owner');
    return [inTopic!.content, toOwner!.content];
  };

  let id = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** foo' });
  t.same(await worker.runOnce(), ['failed']);
  t.equal(hook.received.length, 1, 'a 5xx is not tried again');
  t.same(await lastTwo(), ['Failure! Third party responded with 500',
    `${head(id)}\nThe webhook got a response with status code *500*.\nThe response contains the following payload:\n\`\`\`\nb'oops'\n\`\`\``]);

  answer = { json: { content: 'whatever', widget_content: 'test' } };
  id = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** widget' });
  t.same(await worker.runOnce(), ['failed']);
  t.same(await lastTwo(), ['Failure! Widgets: API programmer sent invalid JSON content',
    `${head(id)}\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Widgets: API programmer sent invalid JSON content\nThe response contains the following payload:\n\`\`\`\n'{"content":"whatever","widget_content":"test"}'\n\`\`\``]);

  answer = 'drop';
  id = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** anyone?' });
  const before = hook.received.length;
  t.same(await worker.runOnce(), ['failed']);
  t.equal(hook.received.length - before, 4, 'a connection error is tried again, 4 requests in all');
  t.same(await lastTwo(), ['Failure! Bot is unavailable', `${head(id)}\nA connection error occurred. Is my bot server down?`]);

  // A timeout (shortened here).
  const quick = new OutgoingWebhookWorker(s.platform, true, { timeoutMs: 200, allowPrivateNetworks: true });
  answer = 'hang';
  id = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** slow' });
  const started = hook.received.length;
  t.same(await quick.runOnce(), ['failed']);
  t.equal(hook.received.length - started, 4);
  t.same(await lastTwo(), ['Failure! Bot is unavailable', `${head(id)}\nRequest timed out after 0.2 seconds.`]);

  // Without the permission to post to private networks, loopback is refused as the real server's proxy does.
  const guarded = new OutgoingWebhookWorker(s.platform, true, { timeoutMs: 2_000, allowPrivateNetworks: false });
  answer = { json: { content: 'never' } };
  id = await send(s, bob, { type: 'stream', to: 'Denmark', topic: 'bar', content: '@**Outgoing Bot** inside' });
  const count = hook.received.length;
  t.same(await guarded.runOnce(), ['failed']);
  t.equal(hook.received.length, count, 'no request made');
  t.same(await lastTwo(), ['Failure! Third party responded with 407', `${head(id)}\nThe URL configured for the webhook is for a private or disallowed network.`]);

  // No payload_url at all: the real server's HTTP library refuses the empty URL.
  const empty = (await s.api('POST', '/bots', alice, { full_name: 'Empty Bot', short_name: 'empty', bot_type: 3 })).body.user_id as number;
  await send(s, bob, { type: 'private', to: JSON.stringify([empty]), content: 'hello?' });
  t.same(await worker.runOnce(), ['failed']);
  const [inDm] = await newest(s, bob, 1);
  const [toOwner] = await newest(s, alice, 1);
  t.match(inDm, { sender_id: empty, content: 'Failure! An exception of type *MissingSchema* occurred for message `hello?`! See the Zulip server logs for more information.' });
  t.match(toOwner, { sender_id: empty, content: /an exception of type MissingSchema occurred:\n```\nInvalid URL '': No scheme supplied\. Perhaps you meant https:\/\/\?\n```$/ });
});

t.test('a trigger is answered once, whoever delivers it', async (t) => {
  const hook = await endpoint(t, () => ({ json: { content: 'only once' } }));
  const s = await startTestServer(t, { outgoingWebhooksAllowPrivateNetworks: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await outgoingBot(s, alice, hook.url);
  await s.outgoingWebhooks.stop();
  const one = new OutgoingWebhookWorker(s.platform, true, { allowPrivateNetworks: true });
  const two = new OutgoingWebhookWorker(s.platform, true, { allowPrivateNetworks: true });
  await send(s, alice, { type: 'private', to: JSON.stringify([bot.id]), content: 'race' });
  const outcomes = (await Promise.all([one.runOnce(), two.runOnce()])).flat();
  t.ok(outcomes.includes('replied'), 'one of them replied');
  t.ok(outcomes.length === 1 || outcomes.includes('skipped'), 'the other, if it got there, sent nothing');
  const replies = (await newest(s, alice, 5)).filter((m) => m.sender_id === bot.id);
  t.equal(replies.length, 1, 'one reply');
  const completed = await s.platform.db.selectFrom('events').select('type').where('type', '=', 'OutgoingWebhookCompleted').execute();
  t.equal(completed.length, 1, 'one completion in the log');
});

t.test('the server\'s own worker answers as soon as the trigger is folded', async (t) => {
  const hook = await endpoint(t, () => ({ json: { content: 'on my own' } }));
  const s = await startTestServer(t, { outgoingWebhooksAllowPrivateNetworks: true });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await outgoingBot(s, alice, hook.url);
  await send(s, alice, { type: 'private', to: JSON.stringify([bot.id]), content: 'anyone there?' });
  const deadline = Date.now() + 5_000;
  let reply: Record<string, any> | undefined;
  while (Date.now() < deadline && !reply) {
    reply = (await newest(s, alice, 1)).find((m) => m.sender_id === bot.id);
    if (!reply) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.match(reply, { content: 'on my own', type: 'private' });
  t.equal(hook.received.length, 1);
});
