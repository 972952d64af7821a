/**
 * A real client's start-up over a real port (issue 18 item 5), in the order the web and terminal
 * clients make their calls: server settings, register for every event type with the capabilities a
 * current client sends, the first page of messages around the first unread, a presence ping, then a
 * blocked long-poll woken by another user's message, and the other user's presence and status.
 */
import t from 'tap';
import type { AddressInfo } from 'node:net';
import { startTestServer, Role, basicAuth, encodeParams, type TestUser } from '../helpers/server.js';

const CLIENT_CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: true,
  stream_typing_notifications: true,
  user_settings_object: true,
  linkifier_url_template: true,
  user_list_incomplete: true,
  include_deactivated_groups: true,
  archived_channels: true,
};

t.test('a client starts up, goes online, and sees another user chat, appear and set a status', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  await s.fastify.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(s.fastify.server.address() as AddressInfo).port}/api/v1`;
  const me = await s.user(Role.MEMBER, 'Terminal User');
  const other = await s.user(Role.MEMBER, 'Chatty Colleague');
  const call = async (as: TestUser | null, method: string, path: string, params: Record<string, unknown> = {}) => {
    const query = method === 'GET' ? `?${encodeParams(params)}` : '';
    const response = await fetch(`${base}${path}${query}`, {
      method,
      headers: {
        ...(as ? { authorization: basicAuth(as.email, as.apiKey) } : {}),
        'user-agent': 'ZulipTerminal/0.7.0',
        ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: method === 'GET' ? undefined : encodeParams(params),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const settings = await call(null, 'GET', '/server_settings');
  t.equal(settings.status, 200);
  t.type(settings.body.zulip_feature_level, 'number');
  t.equal(settings.body.realm_uri ?? settings.body.realm_url, s.platform.config.externalUrl);

  const reg = await call(me, 'POST', '/register', {
    apply_markdown: true,
    client_gravatar: true,
    slim_presence: true,
    include_subscribers: true,
    client_capabilities: JSON.stringify(CLIENT_CAPABILITIES),
  });
  t.equal(reg.status, 200, JSON.stringify(reg.body).slice(0, 300));
  // What the terminal client reads unconditionally at login, and what the web app needs to draw.
  for (const key of ['queue_id', 'last_event_id', 'presences', 'server_timestamp', 'muted_topics', 'user_topics', 'muted_users', 'user_status',
    'scheduled_messages', 'subscriptions', 'unsubscribed', 'never_subscribed', 'realm_users', 'realm_emoji', 'unread_msgs', 'user_settings',
    'realm_user_groups', 'cross_realm_bots', 'recent_private_conversations', 'starred_messages', 'drafts', 'realm_linkifiers',
    'server_presence_ping_interval_seconds', 'server_presence_offline_threshold_seconds', 'max_message_id']) {
    t.ok(key in reg.body, `register has ${key}`);
  }
  t.ok(reg.body.subscriptions.some((sub: { name: string }) => sub.name === 'general'), 'a new member is in #general');
  const general = reg.body.subscriptions.find((sub: { name: string }) => sub.name === 'general') as { stream_id: number };

  const page = await call(me, 'GET', '/messages', {
    anchor: 'first_unread', num_before: 25, num_after: 25, narrow: '[]', apply_markdown: true, client_gravatar: true,
  });
  t.equal(page.status, 200);
  t.ok(Array.isArray(page.body.messages), 'the first page of messages');
  t.type(page.body.anchor, 'number');
  const legacyAnchor = await call(me, 'GET', '/messages', { anchor: 0, use_first_unread_anchor: true, num_before: 25, num_after: 25, narrow: '[]' });
  t.equal(legacyAnchor.status, 200, 'use_first_unread_anchor, as older clients send it');
  t.equal(legacyAnchor.body.anchor, page.body.anchor, 'use_first_unread_anchor finds the same first unread, whatever anchor is sent beside it');

  const ping = await call(me, 'POST', '/users/me/presence', { status: 'active', new_user_input: true, slim_presence: true, ping_only: false });
  t.equal(ping.status, 200);
  t.type(ping.body.server_timestamp, 'number');
  t.ok(String(me.id) in ping.body.presences, 'my own ping shows me online');

  // A blocked long-poll, woken by another user's message, then by their presence and status.
  let last = reg.body.last_event_id as number;
  const seen: any[] = [];
  const pollUntil = async (found: (e: any) => boolean, act: () => Promise<unknown>) => {
    const poll = call(me, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: last });
    await new Promise((r) => setTimeout(r, 150));
    await act();
    const deadline = Date.now() + 15_000;
    let answer = await poll;
    for (;;) {
      t.equal(answer.status, 200);
      for (const event of answer.body.events) {
        seen.push(event);
        last = Math.max(last, event.id);
      }
      if (seen.some(found) || Date.now() > deadline) break;
      answer = await call(me, 'GET', '/events', { queue_id: reg.body.queue_id, last_event_id: last });
    }
    return seen.find(found);
  };
  const message = await pollUntil(
    (e) => e.type === 'message' && e.message.content.includes('hello from a colleague'),
    () => call(other, 'POST', '/messages', { type: 'stream', to: general.stream_id, topic: 'greetings', content: 'hello from a colleague' }),
  );
  t.ok(message, 'the long-poll was woken by the other user\'s message');
  t.equal(message?.message.sender_id, other.id);

  const presence = await pollUntil(
    (e) => e.type === 'presence' && e.user_id === other.id,
    () => call(other, 'POST', '/users/me/presence', { status: 'active', new_user_input: true, slim_presence: true }),
  );
  t.ok(presence, 'the other user coming online reaches my queue');
  const realmPresence = await call(me, 'GET', '/realm/presence');
  t.ok(realmPresence.body.presences[other.email] ?? realmPresence.body.presences[String(other.id)], 'and GET /realm/presence lists them');

  const status = await pollUntil(
    (e) => e.type === 'user_status' && e.user_id === other.id,
    () => call(other, 'POST', '/users/me/status', { status_text: 'in a meeting', emoji_name: 'calendar' }),
  );
  t.equal(status?.status_text, 'in a meeting', 'their status reaches my queue');
  const again = await call(me, 'POST', '/register', { fetch_event_types: JSON.stringify(['user_status', 'presence']) });
  t.equal(again.body.user_status[String(other.id)]?.status_text, 'in a meeting', 'and a new register shows it');
  t.ok(String(other.id) in again.body.presences || other.email in again.body.presences, 'and their presence');
});
