/**
 * Permission matrix (issue 9): every mutating route × every role. Each case gets a fresh actor and
 * fresh objects, so the only thing that decides allow or deny is the actor's role. Expectations come
 * from SPEC.md ("Authorization levels") and the OpenAPI file (x-requires-administrator, descriptions)
 * with the real server's default organization settings.
 */
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { reactivateRealm } from '../../src/services/realm-deactivation.js';
import { requestRealmExport, runRealmExport } from '../../src/services/realm-exports.js';
import { uploadStorage } from '../../src/services/upload-crypto.js';
import { solidPng } from '../helpers/images.js';

t.setTimeout(240_000);

const ROLES = ['unauthenticated', 'deactivated', 'guest', 'member', 'moderator', 'administrator', 'owner', 'bot'] as const;
type RoleName = (typeof ROLES)[number];
type Expect = 'allow' | 'deny';

const ACTIVE: RoleName[] = ['guest', 'member', 'moderator', 'administrator', 'owner', 'bot'];
/** Who may act: everyone signed in and active. */
const ALL = new Set<RoleName>(ACTIVE);
/** Organization administrators (owners are administrators too). */
const ADMINS = new Set<RoleName>(['administrator', 'owner']);
/** Every non-guest: the real server's default for "members" policies (bots have the member role). */
const NON_GUESTS = new Set<RoleName>(['member', 'moderator', 'administrator', 'owner', 'bot']);
const NOBODY = new Set<RoleName>();
// Members and up, without bots (user groups and custom emoji: the real server refuses bots there).
const NON_GUEST_HUMANS = new Set<RoleName>(['member', 'moderator', 'administrator', 'owner']);
// Someone else's user group: moderators and administrators (and its direct members).
const MODERATORS_AND_ADMINS = new Set<RoleName>(['moderator', 'administrator', 'owner']);
/** Endpoints the real server marks @human_users_only. */
const HUMANS = new Set<RoleName>(['guest', 'member', 'moderator', 'administrator', 'owner']);

interface Ctx {
  s: TestServer;
  actor: TestUser;
  /** A member who is not the actor; owns the shared channel's messages. */
  other: TestUser;
  channel: { id: number; name: string };
  join(user: TestUser, name?: string): Promise<void>;
  unique(prefix: string): string;
}

interface Case {
  method: string;
  path: string | ((c: Ctx) => Promise<string> | string);
  params?: (c: Ctx) => Promise<Record<string, unknown>> | Record<string, unknown>;
  allowed: Set<RoleName>;
  note?: string;
  /** Sent as multipart: to /user_uploads, or an image to the path this function gives. */
  upload?: true | ((c: Ctx) => string);
  /** The request changes the actor itself (its key, its account): it gets actors of its own. */
  fresh?: boolean;
}

let seq = 0;
let finishedExport: Promise<number> | undefined;

/** An email invitation made by the shared member (not the actor); its id. */
async function otherInvite(c: Ctx): Promise<number> {
  const email = `${c.unique('pending')}@example.com`;
  const r = await c.s.api('POST', '/invites', c.other, { invitee_emails: email, stream_ids: [] });
  if (r.status !== 200) throw new Error(`invite: ${JSON.stringify(r.body)}`);
  const listed = (await c.s.api('GET', '/invites', c.s.owner)).body.invites as Array<{ id: number; email?: string }>;
  return listed.find((i) => i.email === email)!.id;
}

/** A note to self scheduled an hour ahead (every role may schedule one). */
const scheduledNote = (c: Ctx) => ({ type: 'direct', to: [c.actor.id], content: 'later', scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 3600 });
const scheduleNote = async (c: Ctx) => (await c.s.api('POST', '/scheduled_messages', c.actor, scheduledNote(c))).body.scheduled_message_id as number;

const CASES: Case[] = [
  { method: 'POST', path: '/users/me/api_key/regenerate', allowed: ALL, fresh: true },
  { method: 'POST', path: '/users', params: (c) => ({ email: `${c.unique('new')}@example.com`, full_name: 'New Person' }), allowed: ADMINS },
  { method: 'POST', path: '/bots', params: (c) => ({ full_name: c.unique('A Bot'), short_name: c.unique('bot') }), allowed: NON_GUESTS },
  { method: 'PATCH', path: async (c) => `/users/${(await c.s.user(Role.MEMBER, 'Target')).id}`, params: () => ({ full_name: 'Renamed' }), allowed: ADMINS },
  { method: 'DELETE', path: async (c) => `/users/${(await c.s.user(Role.MEMBER, 'Target')).id}`, allowed: ADMINS },
  { method: 'DELETE', path: '/users/me', allowed: ALL, fresh: true },
  {
    method: 'POST',
    path: async (c) => {
      const target = await c.s.user(Role.MEMBER, 'Target');
      await c.s.api('DELETE', `/users/${target.id}`, c.s.owner);
      return `/users/${target.id}/reactivate`;
    },
    allowed: ADMINS,
  },
  { method: 'PATCH', path: '/users/me/profile_data', params: () => ({ data: [] }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  { method: 'POST', path: '/realm/profile_fields', params: (c) => ({ name: c.unique('field'), field_type: 1 }), allowed: ADMINS },
  { method: 'POST', path: '/register', params: () => ({ event_types: ['message'] }), allowed: ALL },
  {
    method: 'DELETE',
    path: '/events',
    params: async (c) => ({ queue_id: (await c.s.api('POST', '/register', c.actor, { event_types: ['message'] })).body.queue_id }),
    allowed: ALL,
  },
  { method: 'POST', path: '/drafts', params: () => ({ drafts: [{ type: '', to: [], topic: '', content: 'draft' }] }), allowed: ALL },
  {
    method: 'PATCH',
    path: async (c) => `/drafts/${(await c.s.api('POST', '/drafts', c.actor, { drafts: [{ type: '', to: [], topic: '', content: 'a' }] })).body.ids[0]}`,
    params: () => ({ draft: { type: '', to: [], topic: '', content: 'b' } }),
    allowed: ALL,
  },
  {
    method: 'DELETE',
    path: async (c) => `/drafts/${(await c.s.api('POST', '/drafts', c.actor, { drafts: [{ type: '', to: [], topic: '', content: 'a' }] })).body.ids[0]}`,
    allowed: ALL,
  },
  { method: 'POST', path: '/scheduled_messages', params: (c) => scheduledNote(c), allowed: ALL },
  { method: 'PATCH', path: async (c) => `/scheduled_messages/${await scheduleNote(c)}`, params: () => ({ content: 'later still' }), allowed: ALL },
  { method: 'DELETE', path: async (c) => `/scheduled_messages/${await scheduleNote(c)}`, allowed: ALL },
  { method: 'POST', path: '/users/me/subscriptions', params: (c) => ({ subscriptions: [{ name: c.unique('new channel') }] }), allowed: NON_GUESTS, note: 'create a channel' },
  { method: 'POST', path: '/users/me/subscriptions', params: (c) => ({ subscriptions: [{ name: c.channel.name }] }), allowed: NON_GUESTS, note: 'join a public channel' },
  {
    method: 'DELETE',
    path: '/users/me/subscriptions',
    params: async (c) => {
      await c.join(c.actor);
      return { subscriptions: [c.channel.name] };
    },
    allowed: ALL,
  },
  {
    method: 'PATCH',
    path: '/users/me/subscriptions',
    params: async (c) => {
      await c.join(c.actor);
      return { delete: [c.channel.name] };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: '/users/me/subscriptions/properties',
    params: async (c) => {
      await c.join(c.actor);
      return { subscription_data: [{ stream_id: c.channel.id, property: 'pin_to_top', value: true }] };
    },
    allowed: ALL,
  },
  {
    method: 'PATCH',
    path: '/users/me/subscriptions/properties',
    params: async (c) => {
      await c.join(c.actor);
      return { subscription_data: [{ stream_id: c.channel.id, property: 'color', value: '#123456' }] };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: '/users/me/subscriptions',
    params: async (c) => ({ subscriptions: [{ name: c.channel.name }], principals: [(await c.s.user(Role.MEMBER, 'Invitee')).id] }),
    allowed: NON_GUESTS,
    note: 'subscribe someone else',
  },
  {
    method: 'DELETE',
    path: '/users/me/subscriptions',
    params: async (c) => {
      const target = await c.s.user(Role.MEMBER, 'Removed');
      await c.join(target);
      await c.join(c.actor);
      return { subscriptions: [c.channel.name], principals: [target.id] };
    },
    allowed: ADMINS,
    note: 'unsubscribe someone else',
  },
  { method: 'PATCH', path: async (c) => `/streams/${(await newChannel(c)).id}`, params: () => ({ description: 'new description' }), allowed: ADMINS },
  { method: 'DELETE', path: async (c) => `/streams/${(await newChannel(c)).id}`, allowed: ADMINS },
  { method: 'POST', path: '/default_streams', params: async (c) => ({ stream_id: (await newChannel(c)).id }), allowed: ADMINS },
  {
    method: 'DELETE',
    path: '/default_streams',
    params: async (c) => {
      const channel = await newChannel(c);
      await c.s.api('POST', '/default_streams', c.s.owner, { stream_id: channel.id });
      return { stream_id: channel.id };
    },
    allowed: ADMINS,
  },
  {
    method: 'POST',
    path: '/user_topics',
    params: async (c) => {
      await c.join(c.actor);
      return { stream_id: c.channel.id, topic: 'some topic', visibility_policy: 1 };
    },
    allowed: ALL,
  },
  { method: 'POST', path: '/realm/filters', params: (c) => ({ pattern: `${c.unique('P')}(?P<id>[0-9]+)`, url_template: 'https://example.com/{id}' }), allowed: ADMINS },
  { method: 'PATCH', path: async (c) => `/realm/filters/${await newLinkifier(c)}`, params: (c) => ({ pattern: `${c.unique('Q')}(?P<id>[0-9]+)`, url_template: 'https://example.com/q/{id}' }), allowed: ADMINS },
  { method: 'DELETE', path: async (c) => `/realm/filters/${await newLinkifier(c)}`, allowed: ADMINS },
  {
    method: 'PATCH',
    path: '/realm/linkifiers',
    params: async (c) => {
      await newLinkifier(c);
      const ids = (await c.s.api('GET', '/realm/linkifiers', c.s.owner)).body.linkifiers.map((l: { id: number }) => l.id);
      return { ordered_linkifier_ids: [...ids].reverse() };
    },
    allowed: ADMINS,
  },
  { method: 'POST', path: '/realm/playgrounds', params: (c) => ({ name: c.unique('Play'), highlighter_language: 'Python', url_template: 'https://play.example.com/?c={code}' }), allowed: ADMINS },
  {
    method: 'DELETE',
    path: async (c) => `/realm/playgrounds/${(await c.s.api('POST', '/realm/playgrounds', c.s.owner, { name: c.unique('Play'), highlighter_language: 'Python', url_template: 'https://p.example.com/{code}' })).body.id}`,
    allowed: ADMINS,
  },
  { method: 'POST', path: '/user_groups/create', params: (c) => ({ name: c.unique('group'), description: 'd', members: [c.other.id] }), allowed: NON_GUEST_HUMANS },
  { method: 'PATCH', path: async (c) => `/user_groups/${await newGroup(c)}`, params: () => ({ description: 'changed' }), allowed: MODERATORS_AND_ADMINS, note: "someone else's group" },
  { method: 'DELETE', path: async (c) => `/user_groups/${await newGroup(c)}`, allowed: MODERATORS_AND_ADMINS, note: "someone else's group" },
  { method: 'POST', path: async (c) => `/user_groups/${await newGroup(c)}/members`, params: (c) => ({ add: [c.actor.id] }), allowed: MODERATORS_AND_ADMINS, note: "someone else's group" },
  { method: 'POST', path: async (c) => `/user_groups/${await newGroup(c)}/subgroups`, params: async (c) => ({ add: [await newGroup(c)] }), allowed: MODERATORS_AND_ADMINS, note: "someone else's group" },
  { method: 'POST', path: '/users/me/push_device_token', params: () => ({ token: 'a'.repeat(64), appid: 'org.example.app' }), allowed: ALL },
  {
    method: 'DELETE',
    path: '/users/me/push_device_token',
    params: async (c) => {
      await c.s.api('POST', '/users/me/push_device_token', c.actor, { token: 'b'.repeat(64), appid: 'org.example.app' });
      return { token: 'b'.repeat(64) };
    },
    allowed: ALL,
  },
  { method: 'POST', path: '/user_uploads', upload: true, allowed: ALL },
  // Avatars: anyone may change their own while avatar_changes_disabled is off (the default).
  { method: 'POST', path: '/users/me/avatar', upload: () => '/users/me/avatar', allowed: ALL, fresh: true },
  { method: 'DELETE', path: '/users/me/avatar', allowed: ALL, fresh: true },
  // Someone else's bot: only administrators (or its owner) may change it.
  { method: 'PATCH', path: async (c) => `/bots/${await othersBot(c)}`, params: (c) => ({ full_name: c.unique('Renamed Bot') }), allowed: ADMINS, note: "someone else's" },
  { method: 'POST', path: async (c) => `/bots/${await othersBot(c)}/api_key/regenerate`, allowed: ADMINS, note: "someone else's" },
  { method: 'DELETE', path: async (c) => `/bots/${await othersBot(c)}`, allowed: ADMINS, note: "someone else's" },
  // Custom emoji: the default add_custom_emoji_policy lets members add; guests never may.
  { method: 'POST', path: '/realm/emoji/(name)', upload: (c) => `/realm/emoji/${c.unique('emoji')}`, allowed: NON_GUEST_HUMANS },
  {
    method: 'DELETE',
    path: async (c) => {
      const name = c.unique('emoji');
      await upload(c.s, c.other, `/realm/emoji/${name}`);
      return `/realm/emoji/${name}`;
    },
    allowed: ADMINS,
    note: "someone else's",
  },
  {
    method: 'DELETE',
    path: async (c) => {
      const uploaded = await upload(c.s, c.actor);
      const attachments = (await c.s.api('GET', '/attachments', c.actor)).body.attachments as Array<{ id: number; path_id: string }>;
      const mine = attachments.find((a) => uploaded.includes(a.path_id)) ?? attachments[0];
      return `/attachments/${mine?.id ?? 0}`;
    },
    allowed: ALL,
    note: 'own attachment',
  },
  {
    method: 'DELETE',
    path: async (c) => {
      const uploaded = await upload(c.s, c.other);
      const attachments = (await c.s.api('GET', '/attachments', c.other)).body.attachments as Array<{ id: number; path_id: string }>;
      return `/attachments/${(attachments.find((a) => uploaded.includes(a.path_id)) ?? attachments[0])!.id}`;
    },
    allowed: NOBODY,
    note: "someone else's attachment",
  },
  { method: 'PATCH', path: '/settings', params: () => ({ twenty_four_hour_time: true }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  { method: 'PATCH', path: '/settings/display', params: () => ({ dense_mode: false }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  { method: 'PATCH', path: '/settings/notifications', params: () => ({ enable_sounds: false }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  { method: 'PATCH', path: '/realm/user_settings_defaults', params: () => ({ dense_mode: false }), allowed: ADMINS },
  { method: 'POST', path: '/users/me/alert_words', params: () => ({ alert_words: ['perm'] }), allowed: ALL },
  { method: 'DELETE', path: '/users/me/alert_words', params: () => ({ alert_words: ['perm'] }), allowed: ALL },
  { method: 'POST', path: '/users/me/presence', params: () => ({ status: 'active', ping_only: true }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  { method: 'POST', path: '/users/me/status', params: () => ({ status_text: 'perm' }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  // The real server's per-service push routes are @human_users_only.
  { method: 'POST', path: '/users/me/apns_device_token', params: () => ({ token: 'c'.repeat(64), appid: 'org.example.app' }), allowed: HUMANS },
  {
    method: 'DELETE',
    path: '/users/me/apns_device_token',
    params: async (c) => {
      await c.s.api('POST', '/users/me/apns_device_token', c.actor, { token: 'd'.repeat(64), appid: 'org.example.app' });
      return { token: 'd'.repeat(64) };
    },
    allowed: HUMANS,
  },
  { method: 'POST', path: '/users/me/android_gcm_reg_id', params: () => ({ token: 'e'.repeat(64) }), allowed: HUMANS },
  {
    method: 'DELETE',
    path: '/users/me/android_gcm_reg_id',
    params: async (c) => {
      await c.s.api('POST', '/users/me/android_gcm_reg_id', c.actor, { token: 'f'.repeat(64) });
      return { token: 'f'.repeat(64) };
    },
    allowed: HUMANS,
  },
  {
    method: 'PATCH',
    path: async (c) => {
      await c.join(c.actor);
      return `/users/me/subscriptions/${c.channel.id}`;
    },
    params: () => ({ property: 'pin_to_top', value: true }),
    allowed: ALL,
  },
  { method: 'POST', path: '/users/me/tutorial_status', params: () => ({ status: 'finished' }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  { method: 'POST', path: '/zcommand', params: () => ({ command: '/ping' }), allowed: ALL },
  { method: 'POST', path: '/calls/zoom/create', allowed: NOBODY, note: 'no video call service: "Zoom credentials have not been configured"' },
  // The real server's bot storage is keyed by the requesting user and takes any active user.
  { method: 'PUT', path: '/bot_storage', params: () => ({ storage: { perm: 'value' } }), allowed: ALL },
  {
    method: 'DELETE',
    path: '/bot_storage',
    params: async (c) => {
      await c.s.api('PUT', '/bot_storage', c.actor, { storage: { doomed: 'x' } });
      return { keys: ['doomed'] };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: '/typing',
    params: async (c) => {
      await c.join(c.actor);
      return { op: 'start', type: 'stream', stream_id: c.channel.id, topic: 'typing' };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: '/messages',
    params: async (c) => {
      await c.join(c.actor);
      return { type: 'stream', to: c.channel.id, topic: 'hello', content: 'hi' };
    },
    allowed: ALL,
  },
  { method: 'POST', path: '/messages', params: (c) => ({ type: 'direct', to: [c.other.id], content: 'hi' }), allowed: ALL, note: 'direct message' },
  { method: 'POST', path: '/messages/render', params: () => ({ content: '**bold**' }), allowed: ALL },
  {
    method: 'POST',
    path: '/messages/flags',
    params: async (c) => {
      await c.join(c.actor);
      return { messages: [await sendStream(c.s, c.other, c.channel.id, 'flags', 'x')], op: 'add', flag: 'starred' };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: '/messages/flags/narrow',
    params: () => ({ anchor: 'oldest', num_before: 0, num_after: 10, narrow: [], op: 'add', flag: 'read' }),
    allowed: ALL,
  },
  {
    method: 'PATCH',
    path: async (c) => {
      await c.join(c.actor);
      return `/messages/${await sendStream(c.s, c.actor, c.channel.id, 'edit', 'before')}`;
    },
    params: () => ({ content: 'after' }),
    allowed: ALL,
    note: 'own message content',
  },
  {
    method: 'PATCH',
    path: async (c) => {
      await c.join(c.actor);
      return `/messages/${await sendStream(c.s, c.other, c.channel.id, 'edit', 'before')}`;
    },
    params: () => ({ content: 'after' }),
    allowed: NOBODY,
    note: "someone else's message content",
  },
  {
    method: 'DELETE',
    path: async (c) => {
      await c.join(c.actor);
      return `/messages/${await sendStream(c.s, c.other, c.channel.id, 'delete', 'doomed')}`;
    },
    allowed: ADMINS,
    note: "someone else's message",
  },
  {
    method: 'POST',
    path: async (c) => {
      await c.join(c.actor);
      return `/messages/${await sendStream(c.s, c.other, c.channel.id, 'react', 'x')}/reactions`;
    },
    params: () => ({ emoji_name: 'smile' }),
    allowed: ALL,
  },
  {
    method: 'DELETE',
    path: async (c) => {
      await c.join(c.actor);
      const id = await sendStream(c.s, c.other, c.channel.id, 'react', 'x');
      await c.s.api('POST', `/messages/${id}/reactions`, c.actor, { emoji_name: 'smile' });
      return `/messages/${id}/reactions`;
    },
    params: () => ({ emoji_name: 'smile' }),
    allowed: ALL,
    note: 'own reaction',
  },
  { method: 'POST', path: '/mark_all_as_read', allowed: ALL },
  {
    method: 'POST',
    path: '/mark_stream_as_read',
    params: async (c) => {
      await c.join(c.actor);
      return { stream_id: c.channel.id };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: '/mark_topic_as_read',
    params: async (c) => {
      await c.join(c.actor);
      return { stream_id: c.channel.id, topic_name: 'hello' };
    },
    allowed: ALL,
  },
  {
    method: 'POST',
    path: async (c) => {
      await c.join(c.actor);
      await sendStream(c.s, c.other, c.channel.id, 'doomed topic', 'x');
      return `/streams/${c.channel.id}/delete_topic`;
    },
    params: () => ({ topic_name: 'doomed topic' }),
    allowed: ADMINS,
  },
  { method: 'POST', path: (c) => `/users/me/muted_users/${c.other.id}`, allowed: ALL },
  {
    method: 'DELETE',
    path: async (c) => {
      await c.s.api('POST', `/users/me/muted_users/${c.other.id}`, c.actor);
      return `/users/me/muted_users/${c.other.id}`;
    },
    allowed: ALL,
  },
  {
    method: 'PATCH',
    path: '/realm/profile_fields',
    params: async (c) => ({ order: (await c.s.api('GET', '/realm/profile_fields', c.s.owner)).body.custom_fields.map((f: { id: number }) => f.id) }),
    allowed: ADMINS,
  },
  {
    method: 'PATCH',
    path: '/users/me/subscriptions/muted_topics',
    params: async (c) => {
      await c.join(c.actor);
      return { stream_id: c.channel.id, topic: c.unique('topic'), op: 'add' };
    },
    allowed: ALL,
  },
  { method: 'POST', path: '/mobile_push/test_notification', allowed: HUMANS },
  { method: 'POST', path: '/invites', params: (c) => ({ invitee_emails: `${c.unique('invitee')}@example.com`, stream_ids: [] }), allowed: NON_GUEST_HUMANS, note: 'require_member_or_admin: bots "This endpoint does not accept bot requests."' },
  // Someone else's invitations: administrators manage them (their own, anyone).
  { method: 'DELETE', path: async (c) => `/invites/${await otherInvite(c)}`, allowed: ADMINS },
  { method: 'POST', path: async (c) => `/invites/${await otherInvite(c)}/resend`, allowed: ADMINS },
  { method: 'POST', path: '/invites/multiuse', allowed: ADMINS, note: 'create_multiuse_invite_group: administrators by default' },
  {
    method: 'DELETE',
    path: async (c) => {
      const link = await c.s.api('POST', '/invites/multiuse', c.s.owner, {});
      const listed = (await c.s.api('GET', '/invites', c.s.owner)).body.invites as Array<{ id: number; link_url?: string }>;
      return `/invites/multiuse/${listed.find((i) => i.link_url === link.body.invite_link)!.id}`;
    },
    allowed: ADMINS,
  },
  { method: 'POST', path: '/users/me/onboarding_steps', params: () => ({ onboarding_step: 'intro_inbox_view_modal' }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  {
    method: 'POST',
    path: '/submessage',
    params: async (c) => {
      await c.join(c.actor);
      const poll = await sendStream(c.s, c.other, c.channel.id, 'polls', '/poll Which?\nOne\nTwo');
      return { message_id: poll, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }) };
    },
    allowed: ALL,
  },
  {
    method: 'DELETE',
    path: async (c) => {
      await c.join(c.actor);
      return `/messages/${await sendStream(c.s, c.other, c.channel.id, 'purge', 'doomed')}`;
    },
    params: () => ({ purge: true }),
    allowed: ADMINS,
    note: 'purge (shred at once)',
  },
  // Our export is the whole log: owners only (test/api/realm-exports.test.ts checks the wording).
  { method: 'POST', path: '/export/realm', allowed: new Set<RoleName>(['owner']) },
  {
    method: 'DELETE',
    // One finished export for the whole row: only the owner's delete succeeds, and the check precedes the lookup.
    path: async (c) => {
      finishedExport ??= (async () => {
        const meta = { actorId: c.s.owner.id, realmId: 1, client: 'test', requestId: c.unique('export'), now: new Date() };
        const id = await requestRealmExport(c.s.platform, meta, c.s.owner.id);
        await runRealmExport(c.s.platform, uploadStorage(c.s.platform), 1, id);
        return id;
      })();
      return `/export/realm/${await finishedExport}`;
    },
    allowed: new Set<RoleName>(['owner']),
  },
  { method: 'POST', path: '/legal_holds', params: (c) => ({ scope: 'channel', id: c.channel.id }), allowed: new Set<RoleName>(['owner']) },
  { method: 'DELETE', path: '/legal_holds', params: (c) => ({ scope: 'channel', id: c.channel.id }), allowed: new Set<RoleName>(['owner']) },
  // Our own route (the real server only has its delete_user management command): owners only.
  { method: 'POST', path: async (c) => `/users/${(await c.s.user(Role.MEMBER, 'Erased')).id}/erase`, allowed: new Set<RoleName>(['owner']) },
  // A plain administrator setting (the real server: @require_realm_admin; owner-only settings are not asked here).
  { method: 'PATCH', path: '/realm', params: (c) => ({ description: c.unique('description') }), allowed: ADMINS },
  // Realm domains decide who may sign up: the real server's @require_realm_owner.
  { method: 'POST', path: '/realm/domains', params: (c) => ({ domain: `${c.unique('d')}.example.com`, allow_subdomains: false }), allowed: new Set<RoleName>(['owner']) },
  { method: 'PATCH', path: async (c) => `/realm/domains/${await newDomain(c)}`, params: () => ({ allow_subdomains: true }), allowed: new Set<RoleName>(['owner']) },
  { method: 'DELETE', path: async (c) => `/realm/domains/${await newDomain(c)}`, allowed: new Set<RoleName>(['owner']) },
  // Default channel groups: @require_realm_admin.
  {
    method: 'POST',
    path: '/default_stream_groups/create',
    params: async (c) => ({ group_name: c.unique('dsg'), description: 'd', stream_names: [(await newChannel(c)).name] }),
    allowed: ADMINS,
  },
  { method: 'PATCH', path: async (c) => `/default_stream_groups/${await newDefaultGroup(c)}`, params: (c) => ({ new_description: c.unique('changed') }), allowed: ADMINS },
  {
    method: 'PATCH',
    path: async (c) => `/default_stream_groups/${await newDefaultGroup(c)}/streams`,
    params: async (c) => ({ op: 'add', stream_names: [(await newChannel(c)).name] }),
    allowed: ADMINS,
  },
  { method: 'DELETE', path: async (c) => `/default_stream_groups/${await newDefaultGroup(c)}`, allowed: ADMINS },
  // Custom profile fields: editing and deleting one is @require_realm_admin.
  { method: 'PATCH', path: async (c) => `/realm/profile_fields/${await newProfileField(c)}`, params: (c) => ({ name: c.unique('renamed') }), allowed: ADMINS },
  { method: 'DELETE', path: async (c) => `/realm/profile_fields/${await newProfileField(c)}`, allowed: ADMINS },
  // Clearing one's own value of a field everyone may edit: the real server's @human_users_only.
  { method: 'DELETE', path: '/users/me/profile_data', params: async (c) => ({ data: [await newProfileField(c)] }), allowed: HUMANS, note: 'bots: "This endpoint does not accept bot requests."' },
  // Organization icon and logos: @require_realm_admin.
  { method: 'POST', path: '/realm/icon', upload: () => '/realm/icon', allowed: ADMINS },
  { method: 'DELETE', path: '/realm/icon', allowed: ADMINS },
  { method: 'POST', path: '/realm/logo', upload: () => '/realm/logo', params: () => ({ night: false }), allowed: ADMINS },
  { method: 'DELETE', path: '/realm/logo', params: () => ({ night: true }), allowed: ADMINS },
  // Last: an owner's success deactivates the organization; each role's turn starts with it active again.
  {
    method: 'POST',
    path: async (c) => {
      await reactivateRealm(c.s.platform, { actorId: null, realmId: 1, client: 'test', requestId: c.unique('reactivate'), now: new Date() }, 1);
      return '/realm/deactivate';
    },
    allowed: new Set<RoleName>(['owner']),
  },
];

async function newChannel(c: Ctx): Promise<{ id: number; name: string }> {
  const name = c.unique('channel');
  const id = await createChannel(c.s, c.s.owner, name, [c.actor].filter((u) => u.id !== c.s.owner.id));
  return { id, name };
}

async function newLinkifier(c: Ctx): Promise<number> {
  const r = await c.s.api('POST', '/realm/filters', c.s.owner, { pattern: `${c.unique('L')}(?P<id>[0-9]+)`, url_template: 'https://example.com/{id}' });
  return r.body.id as number;
}

async function othersBot(c: Ctx): Promise<number> {
  const r = await c.s.api('POST', '/bots', c.other, { full_name: c.unique('Bot'), short_name: c.unique('bot') });
  return r.body.user_id as number;
}

async function newGroup(c: Ctx): Promise<number> {
  const r = await c.s.api('POST', '/user_groups/create', c.s.owner, { name: c.unique('group'), description: 'd', members: [c.other.id] });
  return r.body.group_id as number;
}

async function newDomain(c: Ctx): Promise<string> {
  const domain = `${c.unique('d')}.example.org`;
  const r = await c.s.api('POST', '/realm/domains', c.s.owner, { domain, allow_subdomains: false });
  if (r.status !== 200) throw new Error(`realm domain: ${JSON.stringify(r.body)}`);
  return domain;
}

async function newDefaultGroup(c: Ctx): Promise<number> {
  const name = c.unique('dsg');
  const r = await c.s.api('POST', '/default_stream_groups/create', c.s.owner, { group_name: name, description: 'd', stream_names: [(await newChannel(c)).name] });
  if (r.status !== 200) throw new Error(`default channel group: ${JSON.stringify(r.body)}`);
  const groups = (await c.s.api('POST', '/register', c.s.owner, { fetch_event_types: ['default_stream_groups'] })).body.realm_default_stream_groups as Array<{ id: number; name: string }>;
  return groups.find((g) => g.name === name)!.id;
}

async function newProfileField(c: Ctx): Promise<number> {
  const r = await c.s.api('POST', '/realm/profile_fields', c.s.owner, { name: c.unique('field'), field_type: 1 });
  if (r.status !== 200) throw new Error(`profile field: ${JSON.stringify(r.body)}`);
  return r.body.id as number;
}

// The smallest valid PNG (1x1, transparent), for custom emoji.
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082', 'hex');

async function upload(s: TestServer, as: TestUser | null, path = '/user_uploads', fields: Record<string, unknown> = {}): Promise<string> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  if (path === '/user_uploads') form.append('file', new Blob(['hello']), 'perm.txt');
  // The organization's icon and logos are decoded and resized, so they get a real image.
  else if (path === '/realm/icon' || path === '/realm/logo') form.append('file', new Blob([await solidPng(32, { r: 0, g: 90, b: 200 })], { type: 'image/png' }), 'icon.png');
  else form.append('file', new Blob([PNG], { type: 'image/png' }), 'emoji.png');
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  const response = await s.fastify.inject({
    method: 'POST',
    url: `/api/v1${path}`,
    headers: { ...(as ? { authorization: as.auth } : {}), 'content-type': request.headers.get('content-type')! },
    payload: Buffer.from(await request.arrayBuffer()),
  });
  return response.body;
}

const roleValue: Record<Exclude<RoleName, 'unauthenticated' | 'deactivated' | 'bot'>, number> = {
  guest: Role.GUEST,
  member: Role.MEMBER,
  moderator: Role.MODERATOR,
  administrator: Role.ADMINISTRATOR,
  owner: Role.OWNER,
};

t.test('permission matrix: every mutating route × every role', async (t) => {
  const s = await startTestServer(t);
  const other = await s.user(Role.MEMBER, 'Other');
  const channelName = 'permissions';
  const channelId = await createChannel(s, s.owner, channelName, [other]);
  const base = { s, other, channel: { id: channelId, name: channelName }, unique: (p: string) => `${p}${++seq}` };
  const join = async (user: TestUser, name = channelName) => {
    const r = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name }], principals: [user.id] });
    if (r.status !== 200) throw new Error(`join: ${JSON.stringify(r.body)}`);
  };

  // Actors are reused across cases (each case makes its own objects) except where the case changes them.
  const cached = new Map<RoleName, TestUser | null>();
  let standIn: TestUser | undefined;
  async function actorFor(role: RoleName, fresh: boolean): Promise<TestUser | null> {
    if (!fresh && cached.has(role)) return cached.get(role)!;
    const actor = await makeActor(role);
    if (!fresh) cached.set(role, actor);
    return actor;
  }
  async function makeActor(role: RoleName): Promise<TestUser | null> {
    switch (role) {
      case 'unauthenticated':
        return null;
      case 'deactivated': {
        const user = await s.user(Role.MEMBER, 'Deactivated');
        await s.api('DELETE', `/users/${user.id}`, s.owner);
        return user;
      }
      case 'bot': {
        const owner = await s.user(Role.MEMBER, 'Bot Owner');
        return s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: owner.id });
      }
      default:
        return s.user(roleValue[role], role);
    }
  }

  const mutating = new Set(s.fastify.apiRoutes.filter((r) => r.method !== 'GET' && r.auth === 'user' && r.url.startsWith('/api/v1/')).map((r) => `${r.method} ${r.url}`));
  const covered = new Set<string>();
  const mismatches: string[] = [];
  const table: string[] = [];
  for (const kase of CASES) {
    const row: string[] = [];
    for (const role of ROLES) {
      const actor = await actorFor(role, kase.fresh === true);
      // Objects the request needs are made for (or owned by) a stand-in when there is no usable actor.
      standIn ??= await s.user(Role.MEMBER, 'Stand-in');
      const subject = actor && role !== 'deactivated' ? actor : standIn;
      const c: Ctx = { ...base, actor: subject, join };
      const path = typeof kase.upload === 'function' ? kase.upload(c) : typeof kase.path === 'string' ? kase.path : await kase.path(c);
      const params = kase.params ? await kase.params(c) : {};
      const full = `/api/v1${path}`;
      const candidates = s.fastify.apiRoutes.filter((route) => route.method === kase.method && new RegExp(`^${route.url.replace(/:[a-zA-Z_]+/g, '[^/]+').replace(/\*$/, '.+')}$`).test(full));
      // Like the router, a literal path wins over a parametric one.
      const template = candidates.find((route) => route.url === full) ?? candidates[0];
      if (template) covered.add(`${template.method} ${template.url}`);
      const r = kase.upload
        ? await (async () => {
            const body = await upload(s, actor, path, params);
            return { status: JSON.parse(body).result === 'success' ? 200 : 400, body: JSON.parse(body) };
          })()
        : await s.api(kase.method, path, actor, params);
      const expected: Expect = kase.allowed.has(role) ? 'allow' : 'deny';
      const got: Expect = r.status >= 200 && r.status < 300 ? 'allow' : 'deny';
      row.push(got === 'allow' ? 'Y' : '-');
      const label = `${kase.method} ${typeof kase.path === 'string' ? kase.path : path}${kase.note ? ` (${kase.note})` : ''} as ${role}`;
      if (got !== expected) mismatches.push(`${label}: expected ${expected}, got ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
      if (got === 'deny') {
        if (r.status < 400 || r.status >= 500 || r.body?.result !== 'error') mismatches.push(`${label}: a denial must be a 4xx error envelope, got ${r.status}`);
        if (role === 'unauthenticated' && r.body?.code !== 'UNAUTHORIZED') mismatches.push(`${label}: code ${r.body?.code}, expected UNAUTHORIZED`);
        if (role === 'deactivated' && r.body?.code !== 'USER_DEACTIVATED') mismatches.push(`${label}: code ${r.body?.code}, expected USER_DEACTIVATED`);
      }
    }
    table.push(`${row.join(' ')}  ${kase.method} ${typeof kase.path === 'string' ? kase.path : '(…)'}${kase.note ? ` (${kase.note})` : ''}`);
  }
  t.comment(`allowed (Y) / denied (-) per role: ${ROLES.join(' ')}`);
  for (const line of table) t.comment(line);
  await reactivateRealm(s.platform, { actorId: null, realmId: 1, client: 'test', requestId: 'reactivate-last', now: new Date() }, 1);
  t.same(mismatches, [], 'every role gets exactly the access the real server gives it');
  // /realm/emoji/* is the same handler as /realm/emoji/:emoji_name, there only so a name with a slash gets its error.
  const sameHandler = new Set(['POST /api/v1/realm/emoji/*', 'DELETE /api/v1/realm/emoji/*']);
  t.same([...mutating].filter((r) => !covered.has(r) && r !== 'POST /api/v1/fetch_api_key' && !sameHandler.has(r)), [], 'every mutating route is in the matrix');
});
