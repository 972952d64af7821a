import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

const SETTINGS_TYPES = ['user_settings', 'update_display_settings', 'update_global_notifications'];

t.test('user_settings events for clients with user_settings_object', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const register = { event_types: [...SETTINGS_TYPES, 'realm_user'], fetch_event_types: [...SETTINGS_TYPES, 'realm_user'], client_capabilities: { user_settings_object: true } };

  const events = await verifyAction(t, s, alice, () => s.api('PATCH', '/settings', alice, { color_scheme: 2, default_language: 'fr', send_read_receipts: false }), { register });
  t.same(events.map(({ id: _id, ...e }) => e), [
    { type: 'user_settings', op: 'update', property: 'color_scheme', value: 2 },
    { type: 'user_settings', op: 'update', property: 'default_language', value: 'fr', language_name: 'French' },
    { type: 'user_settings', op: 'update', property: 'send_read_receipts', value: false },
  ], 'one event per changed setting, no legacy events');

  const unchanged = await verifyAction(t, s, alice, () => s.api('PATCH', '/settings', alice, { color_scheme: 2 }), { register });
  t.same(unchanged, [], 'setting a value it already has sends nothing');

  await verifyAction(t, s, alice, () => s.api('PATCH', '/settings', alice, { timezone: 'Asia/Tokyo', full_name: 'Alice Renamed' }), {
    register,
    expect: (events) => {
      t.match(events, [
        { type: 'realm_user', op: 'update', person: { user_id: alice.id, full_name: 'Alice Renamed' } },
        { type: 'realm_user', op: 'update', person: { user_id: alice.id, timezone: 'Asia/Tokyo' } },
        { type: 'user_settings', op: 'update', property: 'timezone', value: 'Asia/Tokyo' },
      ]);
    },
  });
});

t.test('legacy events for clients without user_settings_object', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const register = { event_types: SETTINGS_TYPES, fetch_event_types: SETTINGS_TYPES };

  const reg = await s.api('POST', '/register', alice, register);
  t.equal(reg.body.color_scheme, 1, 'display settings flattened to the top level');
  t.equal(reg.body.enable_sounds, true, 'notification settings flattened to the top level');
  t.equal(reg.body.timezone, '');
  t.notOk('send_read_receipts' in reg.body, 'newer settings only in user_settings');
  const modern = await s.api('POST', '/register', alice, { ...register, client_capabilities: { user_settings_object: true } });
  t.notOk('color_scheme' in modern.body, 'no flattened copy for clients with the capability');

  const events = await verifyAction(t, s, alice, () =>
    s.api('PATCH', '/settings', alice, { color_scheme: 3, default_language: 'de', enable_sounds: false, send_read_receipts: false, timezone: 'Europe/Paris' }), { register });
  const strip = events.map(({ id: _id, ...e }) => e);
  t.same(strip, [
    { type: 'user_settings', op: 'update', property: 'color_scheme', value: 3 },
    { type: 'update_display_settings', user: alice.email, setting_name: 'color_scheme', setting: 3 },
    { type: 'user_settings', op: 'update', property: 'default_language', value: 'de', language_name: 'German' },
    { type: 'update_display_settings', user: alice.email, setting_name: 'default_language', setting: 'de', language_name: 'German' },
    { type: 'user_settings', op: 'update', property: 'enable_sounds', value: false },
    { type: 'update_global_notifications', user: alice.email, notification_name: 'enable_sounds', setting: false },
    { type: 'user_settings', op: 'update', property: 'send_read_receipts', value: false },
    // The time zone last, as the real server changes it after the other settings.
    { type: 'user_settings', op: 'update', property: 'timezone', value: 'Europe/Paris' },
    { type: 'update_display_settings', user: alice.email, setting_name: 'timezone', setting: 'Europe/Paris' },
  ]);
});

t.test('settings events reach only the user', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { event_types: SETTINGS_TYPES, fetch_event_types: SETTINGS_TYPES };
  const events = await verifyAction(t, s, bob, () => s.api('PATCH', '/settings', alice, { color_scheme: 2 }), { register });
  t.same(events, []);
});

t.test('email_address_visibility changes what others see', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const guest = await s.user(Role.GUEST, 'Guest');
  const register = { event_types: ['realm_user', ...SETTINGS_TYPES], fetch_event_types: ['realm_user', ...SETTINGS_TYPES], client_capabilities: { user_settings_object: true } };
  const aliceFor = async (viewer: typeof bob) =>
    (await s.api('POST', '/register', viewer, { fetch_event_types: ['realm_user'] })).body.realm_users.find((u: any) => u.user_id === alice.id);

  t.equal((await aliceFor(bob)).delivery_email, alice.email);
  // Everyone → nobody: Bob loses the address and the API email becomes a fake one.
  const toNobody = await verifyAction(t, s, bob, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 4 }), { register });
  t.match(toNobody, [
    { type: 'realm_user', op: 'update', person: { user_id: alice.id, delivery_email: null } },
    { type: 'realm_user', op: 'update', person: { user_id: alice.id, new_email: new RegExp(`^user${alice.id}@`) } },
  ]);
  t.equal((await aliceFor(bob)).delivery_email, null);

  // Nobody → administrators: the administrator sees it again; Bob still does not, and gets nothing.
  await verifyAction(t, s, admin, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 3 }), {
    register,
    expect: (events) => t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'realm_user', op: 'update', person: { user_id: alice.id, delivery_email: alice.email } }]),
  });
  const nothingForBob = await verifyAction(t, s, bob, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 5 }), { register });
  t.same(nothingForBob, [], 'administrators only → moderators only changes nothing for a member');

  // Members only: the guest still cannot, Bob can; back to everyone: the real address is the API email.
  await verifyAction(t, s, guest, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 2 }), {
    register,
    expect: (events) => t.same(events, []),
  });
  await verifyAction(t, s, guest, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 1 }), {
    register,
    expect: (events) => t.match(events, [{ person: { delivery_email: alice.email } }, { person: { new_email: alice.email } }]),
  });

  // The user's own state: the API email in /register follows, and so do clients that compute avatars.
  await verifyAction(t, s, alice, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 4 }), {
    register,
    expect: (events) => t.match(events, [{ type: 'user_settings', property: 'email_address_visibility', value: 4 }, { type: 'realm_user', person: { new_email: new RegExp(`^user${alice.id}@`) } }]),
  });
  await verifyAction(t, s, bob, () => s.api('PATCH', '/settings', alice, { email_address_visibility: 1 }), {
    register: { ...register, client_gravatar: true },
    expect: (events) => t.match(events, [{ person: { delivery_email: alice.email } }, { person: { new_email: alice.email } }, { person: { avatar_url: null } }]),
  });
});

t.test('organization defaults events', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const register = { event_types: ['realm_user_settings_defaults', 'user_settings'], fetch_event_types: ['realm_user_settings_defaults', 'user_settings'] };
  const events = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/user_settings_defaults', admin, { color_scheme: 2, enable_digest_emails: false, emojiset: 'vendor2' }), { register });
  t.same(events.map(({ id: _id, ...e }) => e), [
    { type: 'realm_user_settings_defaults', op: 'update', property: 'color_scheme', value: 2 },
    { type: 'realm_user_settings_defaults', op: 'update', property: 'emojiset', value: 'vendor2' },
    { type: 'realm_user_settings_defaults', op: 'update', property: 'enable_digest_emails', value: false },
  ], 'one event per changed default, in the catalog order');
  const unchanged = await verifyAction(t, s, member, () => s.api('PATCH', '/realm/user_settings_defaults', admin, { color_scheme: 2 }), { register });
  t.same(unchanged, []);
});

t.test('a confirmed email change reaches every client', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'settings-events-mail-'));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const register = { event_types: ['realm_user'], fetch_event_types: ['realm_user'] };
  const requested = await verifyAction(t, s, alice, () => s.api('PATCH', '/settings', alice, { email: 'alice@elsewhere.test' }), { register });
  t.same(requested, [], 'asking for a change changes nothing yet');
  const mail = readFileSync(path.join(dataDir, 'emails', readdirSync(path.join(dataDir, 'emails'))[0]!), 'utf8');
  const link = new URL(/(http\S+confirm_new_email\/\S+)/.exec(mail)![1]!);
  // (Alice's own queue cannot be read with her old address afterwards: Bob watches.)
  await verifyAction(t, s, bob, () => s.fastify.inject({ method: 'GET', url: link.pathname }), {
    register,
    expect: (events) => t.match(events, [{ person: { user_id: alice.id, delivery_email: 'alice@elsewhere.test' } }, { person: { user_id: alice.id, new_email: 'alice@elsewhere.test' } }]),
  });
  await verifyAction(t, s, bob, () => s.api('PATCH', '/settings', { ...alice, auth: `Basic ${Buffer.from(`alice@elsewhere.test:${alice.apiKey}`).toString('base64')}` }, { full_name: 'Alice E.' }), {
    register,
    expect: (events) => t.match(events, [{ person: { full_name: 'Alice E.' } }]),
  });
});
