// The pure rules of outgoing webhook bots, from the real server's zerver/lib/outgoing_webhook.py and
// get_service_bot_events (tests: test_outgoing_webhook_interfaces.py, test_outgoing_webhook_system.py).
import t from 'tap';
import { outgoingWebhookTriggers } from '../../../src/domain/messages/outgoing-webhook-triggers.js';
import { replyFrom, requestBody, Interface, type Trigger } from '../../../src/services/outgoing-webhooks/payload.js';
import { messageLinkUrl, ownerNoticeContent, pythonRepr } from '../../../src/services/outgoing-webhooks/notices.js';
import { planFor } from '../../../src/services/outgoing-webhooks/outcome.js';
import { decideUser, type UserState } from '../../../src/domain/users/decider.js';
import { Role } from '../../../src/domain/roles.js';

t.test('which messages trigger which bots', async (t) => {
  const bots = new Set([50, 51]);
  const base = { senderIsBot: false, outgoingWebhookBots: bots, personallyMentioned: [], mentionedReceivers: [], dmUserIds: [], senderId: 1 };
  t.same(outgoingWebhookTriggers({ ...base, personallyMentioned: [51, 7, 50] }), [{ bot_id: 50, trigger: 'mention' }, { bot_id: 51, trigger: 'mention' }],
    'a channel message: every mentioned bot, subscribed or not');
  t.same(outgoingWebhookTriggers({ ...base, mentionedReceivers: [50, 3] }), [{ bot_id: 50, trigger: 'mention' }], 'a group mention: the members who receive it');
  t.same(outgoingWebhookTriggers({ ...base }), [], 'a channel message without mentions: none, even for subscribed bots');
  t.same(outgoingWebhookTriggers({ ...base, dmUserIds: [1, 50] }), [{ bot_id: 50, trigger: 'direct_message' }], 'a direct message to the bot');
  t.same(outgoingWebhookTriggers({ ...base, dmUserIds: [1, 2, 50, 51] }), [{ bot_id: 50, trigger: 'direct_message' }, { bot_id: 51, trigger: 'direct_message' }],
    'a group direct message: every bot in it');
  t.same(outgoingWebhookTriggers({ ...base, dmUserIds: [1, 2], personallyMentioned: [50] }), [], 'a direct message mentioning a bot that is not in it: none');
  t.same(outgoingWebhookTriggers({ ...base, senderIsBot: true, senderId: 50, dmUserIds: [50, 51] }), [], 'a bot\'s message triggers nothing');
  t.same(outgoingWebhookTriggers({ ...base, outgoingWebhookBots: new Set(), personallyMentioned: [50] }), [], 'no outgoing bots: none');
});

const trigger = (message: Record<string, unknown>): Trigger => ({
  message, trigger: 'mention', bot: { id: 50, email: 'out-bot@example.com', full_name: 'Out' }, token: 'tok', realm: { id: 2, host: 'zulip.testserver' },
});

t.test('the requests of each interface', async (t) => {
  const stream = { type: 'stream', content: '@**Out** hi', stream_id: 123, display_recipient: 'integrations', timestamp: 123456, sender_id: 21, sender_full_name: 'Sample User' };
  t.same(requestBody(Interface.GENERIC, trigger(stream)), {
    kind: 'json',
    value: { data: '@**Out** hi', message: stream, bot_email: 'out-bot@example.com', bot_full_name: 'Out', token: 'tok', trigger: 'mention' },
  });
  t.same(requestBody(Interface.SLACK, trigger(stream)), {
    kind: 'form',
    fields: [['token', 'tok'], ['team_id', 'T2'], ['team_domain', 'zulip.testserver'], ['channel_id', 'C123'], ['channel_name', 'integrations'],
      ['thread_ts', 123456], ['timestamp', 123456], ['user_id', 'U21'], ['user_name', 'Sample User'], ['text', '@**Out** hi'], ['trigger_word', 'mention'], ['service_id', 50]],
  });
  t.equal(requestBody(Interface.SLACK, trigger({ type: 'private' })), null, 'Slack has no direct messages');
});

t.test('what an answer asks the bot to say', async (t) => {
  t.equal(replyFrom(Interface.GENERIC, JSON.stringify({ response_not_required: true, content: 'x' })), null);
  t.same(replyFrom(Interface.GENERIC, JSON.stringify({ response_string: 'test_content' })), { content: 'test_content' });
  t.same(replyFrom(Interface.GENERIC, JSON.stringify({ content: 'test_content', widget_content: 'w', red_herring: 1 })), { content: 'test_content', widget_content: 'w' });
  t.same(replyFrom(Interface.GENERIC, JSON.stringify({ content: 42 })), { content: '42' }, 'content is taken as text');
  t.equal(replyFrom(Interface.GENERIC, '{}'), null);
  t.equal(replyFrom(Interface.GENERIC, JSON.stringify({ content: '  ' })), null, 'blank content: nothing');
  t.equal(replyFrom(Interface.GENERIC, '""'), null, 'the JSON string "" of old bot servers: nothing');
  t.throws(() => replyFrom(Interface.GENERIC, 'unparsable text'), { message: 'Invalid JSON in response' });
  t.throws(() => replyFrom(Interface.GENERIC, 'true'), { message: 'Invalid response format' });
  t.throws(() => replyFrom(Interface.GENERIC, '[1]'), { message: 'Invalid response format' });
  t.same(replyFrom(Interface.SLACK, JSON.stringify({ text: 'test_content' })), { content: 'test_content' });
  t.equal(replyFrom(Interface.SLACK, JSON.stringify({ content: 'ignored' })), null, 'Slack reads only text');
});

t.test('failures: the notices and their wording', async (t) => {
  const notice = (plan: ReturnType<typeof planFor>) => {
    if (plan.kind !== 'failure') throw new Error(plan.kind);
    return { conversation: plan.failure.conversation, owner: plan.failure.owner && ownerNoticeContent({ ...plan.failure.owner, messageUrl: 'URL', botName: 'Out' }) };
  };
  const head = '[A message](URL) to your bot @_**Out** triggered an outgoing webhook.';
  t.same(notice(planFor(1, { kind: 'response', status: 500, body: Buffer.alloc(0) }, 'cmd', 10)), {
    conversation: 'Failure! Third party responded with 500',
    owner: `${head}\nThe webhook got a response with status code *500*.`,
  });
  t.same(notice(planFor(1, { kind: 'response', status: 400, body: Buffer.from("it's bad") }, 'cmd', 10)).owner,
    `${head}\nThe webhook got a response with status code *400*.\nThe response contains the following payload:\n\`\`\`\nb"it's bad"\n\`\`\``);
  t.same(notice(planFor(1, { kind: 'response', status: 407, body: Buffer.alloc(0) }, 'cmd', 10)).owner,
    `${head}\nThe URL configured for the webhook is for a private or disallowed network.`);
  t.same(notice(planFor(1, { kind: 'timeout' }, 'cmd', 10)), { conversation: 'Failure! Bot is unavailable', owner: `${head}\nRequest timed out after 10 seconds.` });
  t.same(notice(planFor(1, { kind: 'connection' }, 'cmd', 10)), { conversation: 'Failure! Bot is unavailable', owner: `${head}\nA connection error occurred. Is my bot server down?` });
  t.same(notice(planFor(1, { kind: 'exception', type: 'MissingSchema', message: "Invalid URL '': No scheme supplied. Perhaps you meant https://?" }, '@**Out** foo', 10)), {
    conversation: 'Failure! An exception of type *MissingSchema* occurred for message `@**Out** foo`! See the Zulip server logs for more information.',
    owner: `${head}\nWhen trying to send a request to the webhook service, an exception of type MissingSchema occurred:\n\`\`\`\nInvalid URL '': No scheme supplied. Perhaps you meant https://?\n\`\`\``,
  });
  t.same(notice(planFor(1, { kind: 'response', status: 200, body: Buffer.from('true') }, 'cmd', 10)), {
    conversation: 'Failure! Invalid response format',
    owner: `${head}\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid response format\nThe response contains the following payload:\n\`\`\`\n'true'\n\`\`\``,
  });
  t.same(notice(planFor(1, { kind: 'response', status: 200, body: Buffer.from("this isn't valid json") }, 'cmd', 10)).owner,
    `${head}\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid JSON in response\nThe response contains the following payload:\n\`\`\`\n"this isn't valid json"\n\`\`\``);
  t.same(planFor(1, { kind: 'response', status: 204, body: Buffer.from('{"response_not_required": true}') }, 'cmd', 10), { kind: 'nothing' });
});

t.test('Python repr and message links', async (t) => {
  t.equal(pythonRepr('{"content": "whatever"}'), `'{"content": "whatever"}'`);
  t.equal(pythonRepr(`both ' and "`), `'both \\' and "'`);
  t.equal(pythonRepr('a\nb\\é'), `'a\\nb\\\\é'`);
  t.equal(pythonRepr(Buffer.from('a\x00é')), `b'a\\x00\\xc3\\xa9'`);
  t.equal(messageLinkUrl('http://zulip.testserver', { id: 7, stream: { id: 999, name: 'Verona' }, topic: 'Foo', dmUserIds: [] }),
    'http://zulip.testserver/#narrow/channel/999-Verona/topic/Foo/near/7');
  t.equal(messageLinkUrl('http://z', { id: 7, stream: null, topic: '', dmUserIds: [9, 3] }), 'http://z/#narrow/dm/3,9/near/7');
  t.equal(messageLinkUrl('http://z', { id: 7, stream: null, topic: '', dmUserIds: [9, 3, 4] }), 'http://z/#narrow/dm/3,4,9-group/near/7');
});

t.test('ChangeBotService', async (t) => {
  const bot: UserState = {
    user_id: 10, role: Role.MEMBER, is_active: true, is_bot: true, bot_owner_id: 2, full_name: 'Bot', is_billing_admin: false,
    timezone: '', avatar_source: 'G', avatar_version: 1, default_sending_stream_id: null, default_events_register_stream_id: null, default_all_public_streams: false,
  };
  const change = (actor: { user_id: number; role: number }, has_service = true) =>
    decideUser({ type: 'ChangeBotService', actor, base_url: 'https://bot.example.com/', interface: 2, has_service }, bot);
  t.same(change({ user_id: 2, role: Role.MEMBER }), [{ type: 'BotServiceUpdated', data: { user_id: 10, base_url: 'https://bot.example.com/', interface: 2 } }]);
  t.same(change({ user_id: 4, role: Role.ADMINISTRATOR }).length, 1, 'an administrator may');
  t.throws(() => change({ user_id: 3, role: Role.MEMBER }), { message: 'Insufficient permission' });
  t.throws(() => change({ user_id: 2, role: Role.MEMBER }, false), { message: 'This bot has no outgoing webhook service' });
});
