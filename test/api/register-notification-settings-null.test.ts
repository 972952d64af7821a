/**
 * client_capabilities.notification_settings_null: a client with it reads a subscription's unset notification
 * settings as null; one without it (the default) reads the user's own default for channel messages instead, in
 * subscriptions and unsubscribed alike, while wildcard_mentions_notify stays null and events keep their nulls
 * (the real server's handle_stream_notifications_compatibility).
 */
import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, unsubscribe } from '../helpers/channels-fixture.js';
import { verifyAction } from '../helpers/verify-action.js';

const find = (list: Array<Record<string, any>>, id: number) => list.find((s) => s.stream_id === id)!;

t.test('unset stream notification settings with and without the capability', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const general = await createChannel(s, s.owner, 'general', [alice]);
  const old = await createChannel(s, s.owner, 'old', [alice]);
  await unsubscribe(s, alice, 'old', [alice]);
  t.equal((await s.api('PATCH', '/settings', alice, { enable_stream_desktop_notifications: true, enable_stream_push_notifications: true })).status, 200);
  t.equal((await s.api('POST', '/users/me/subscriptions/properties', alice, {
    subscription_data: [{ stream_id: general, property: 'email_notifications', value: true }],
  })).status, 200);

  const withNull = (await s.api('POST', '/register', alice, { event_types: ['subscription'], client_capabilities: { notification_settings_null: true } })).body;
  const sub = find(withNull.subscriptions, general);
  t.equal(sub.desktop_notifications, null);
  t.equal(sub.push_notifications, null);
  t.equal(sub.audible_notifications, null);
  t.equal(sub.email_notifications, true, 'a value the user set stays');
  t.equal(find(withNull.unsubscribed, old).desktop_notifications, null);

  for (const register of [{ event_types: ['subscription'] }, { event_types: ['subscription'], client_capabilities: { notification_settings_null: false } }]) {
    const legacy = (await s.api('POST', '/register', alice, register)).body;
    const entry = find(legacy.subscriptions, general);
    t.equal(entry.desktop_notifications, true, 'desktop: the user default (on)');
    t.equal(entry.push_notifications, true, 'push: the user default (on)');
    t.equal(entry.audible_notifications, false, 'audible: the user default (off)');
    t.equal(entry.email_notifications, true, 'email: set on the subscription');
    t.equal(entry.wildcard_mentions_notify, null, 'wildcard_mentions_notify is not filled in');
    t.equal(find(legacy.unsubscribed, old).desktop_notifications, true, 'unsubscribed channels too');
    t.same(legacy.never_subscribed.filter((n: Record<string, unknown>) => 'desktop_notifications' in n), [], 'never_subscribed has no such settings');
  }
});

t.test('events keep their nulls; the folded state matches a fresh register either way', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  await createChannel(s, s.owner, 'general', [alice]);
  for (const capabilities of [{}, { notification_settings_null: true }]) {
    const name = `new-${Object.keys(capabilities).length}`;
    const events = await verifyAction(t, s, alice, () => createChannel(s, s.owner, name, [alice]), {
      register: { event_types: ['subscription', 'user_settings'], client_capabilities: capabilities },
    });
    const added = events.find((e) => e.type === 'subscription' && e.op === 'add');
    t.equal(added?.subscriptions[0].desktop_notifications, null, 'the add event carries null');
  }
});
