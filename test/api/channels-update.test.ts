import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';

async function create(s: TestServer, as: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], ...extra });
  if (res.status !== 200) throw new Error(`create ${name}: ${JSON.stringify(res.body)}`);
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id;
}

async function setRealm(s: TestServer, props: Record<string, unknown>) {
  await setRealmProperties(s, props);
}

async function groupId(s: TestServer, name: string): Promise<number> {
  return (await s.platform.db.selectFrom('user_groups').select('id').where('name', '=', name).executeTakeFirstOrThrow()).id;
}

t.test('PATCH /streams/{stream_id}: properties and rules', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const id = await create(s, admin, 'general');
  const get = async () => (await s.api('GET', `/streams/${id}`, admin)).body.stream;
  const patch = (params: Record<string, unknown>, as: TestUser = admin) => s.api('PATCH', `/streams/${id}`, as, params);

  t.equal((await patch({ description: 'Line one\nline **two**' })).status, 200);
  t.match(await get(), { description: 'Line one line **two**', rendered_description: '<p>Line one line <strong>two</strong></p>' });
  t.equal((await patch({ description: 'x'.repeat(1025) })).body.msg, 'description is too long (limit: 1024 characters)');
  // Rendered like a message: channel links and mentions resolve.
  await patch({ description: `See #**general** and @**Admin**` });
  const rendered = (await get()).rendered_description;
  t.match(rendered, `data-stream-id="${id}"`);
  t.match(rendered, `data-user-id="${admin.id}"`);

  t.equal((await patch({ new_name: 'renamed' })).status, 200);
  t.equal((await get()).name, 'renamed');
  t.equal((await patch({ new_name: 'renamed' })).body.msg, 'Channel already has that name.');
  t.equal((await patch({ new_name: 'Renamed' })).status, 200, 'changing only the case is allowed');
  await create(s, admin, 'taken');
  t.equal((await patch({ new_name: 'TAKEN' })).body.msg, 'Channel name already in use.');
  t.equal((await patch({ new_name: 'y'.repeat(61) })).body.msg, 'Channel name too long (limit: 60 characters).');
  t.equal((await patch({ new_name: '  ' })).body.msg, "Channel name can't be empty.");

  t.equal((await patch({ stream_post_policy: 2 })).status, 200);
  t.match(await get(), { stream_post_policy: 2, is_announcement_only: true });
  t.equal((await patch({ is_announcement_only: false })).status, 200);
  t.match(await get(), { stream_post_policy: 1, is_announcement_only: false });
  t.equal((await patch({ stream_post_policy: 9 })).status, 400);

  // message_retention_days: owners only; integer, realm_default or unlimited.
  t.equal((await patch({ message_retention_days: 30 })).body.msg, 'Must be an organization owner');
  t.equal((await patch({ message_retention_days: 30 }, s.owner)).status, 200);
  t.equal((await get()).message_retention_days, 30);
  await patch({ message_retention_days: 'unlimited' }, s.owner);
  t.equal((await get()).message_retention_days, -1);
  await patch({ message_retention_days: 'realm_default' }, s.owner);
  t.equal((await get()).message_retention_days, null);
  t.equal((await patch({ message_retention_days: 0 }, s.owner)).body.msg, "Bad value for 'message_retention_days': 0");
  t.equal((await patch({ message_retention_days: 'forever-ish' }, s.owner)).status, 400);

  // can_remove_subscribers_group: system groups except role:internet and role:owners.
  const moderators = await groupId(s, 'role:moderators');
  t.equal((await patch({ can_remove_subscribers_group: moderators })).status, 200);
  t.equal((await get()).can_remove_subscribers_group, moderators);
  for (const name of ['role:internet', 'role:owners']) {
    const res = await patch({ can_remove_subscribers_group: await groupId(s, name) });
    t.equal(res.status, 400, name);
    t.equal(res.body.msg, `'can_remove_subscribers_group' setting cannot be set to '${name}' group.`);
  }
  t.equal((await patch({ can_remove_subscribers_group: 987654 })).body.msg, 'Invalid user group');

  // Permission combinations.
  t.equal((await patch({ history_public_to_subscribers: false })).body.msg, 'Invalid parameters');
  t.equal((await patch({ is_private: false, history_public_to_subscribers: false })).body.msg, 'Invalid parameters');
  t.equal((await patch({ is_private: true })).status, 200);
  t.match(await get(), { invite_only: true, history_public_to_subscribers: false });
  t.equal((await patch({ history_public_to_subscribers: true })).status, 200);
  t.match(await get(), { invite_only: true, history_public_to_subscribers: true });
  t.equal((await patch({ is_private: false })).status, 200);
  t.match(await get(), { invite_only: false, history_public_to_subscribers: true });

  // Web-public needs the realm's spectator access and the creation policy.
  t.equal((await patch({ is_web_public: true })).body.msg, 'Web-public channels are not enabled.');
  await setRealm(s, { enable_spectator_access: true });
  t.equal((await patch({ is_web_public: true })).body.msg, 'Insufficient permission', 'default policy: owners only');
  t.equal((await patch({ is_web_public: true }, s.owner)).status, 200);
  t.equal((await get()).is_web_public, true);
  t.equal((await patch({ is_private: true }, s.owner)).body.msg, 'Invalid parameters', 'web-public cannot be private');
  t.equal((await patch({ is_web_public: false, is_private: true }, s.owner)).status, 200);
  t.match(await get(), { is_web_public: false, invite_only: true });
  await patch({ is_private: false });

  // Default channels.
  t.equal((await patch({ is_default_stream: true })).status, 200);
  const defaults = await s.api('GET', '/streams', admin, { include_default: true, include_public: false, include_subscribed: false });
  t.same(defaults.body.streams.map((x: any) => x.stream_id), [id]);
  t.equal((await patch({ is_private: true, is_default_stream: true })).body.msg, 'A default channel cannot be private.');
  t.equal((await patch({ is_private: true })).body.msg, 'A default channel cannot be private.');
  const member = await s.user(Role.MEMBER, 'Member');
  await s.api('POST', '/users/me/subscriptions', admin, { subscriptions: [{ name: 'renamed' }], principals: [member.id] });
  t.equal((await patch({ is_default_stream: false }, member)).body.msg, 'Must be an organization administrator');
  // The dedicated endpoints.
  t.equal((await s.api('DELETE', '/default_streams', admin, { stream_id: id })).status, 200);
  t.equal((await get()).stream_id, id);
  const listDefaults = async () => (await s.api('GET', '/streams', admin, { include_default: true, include_public: false, include_subscribed: false })).body.streams.length;
  t.equal(await listDefaults(), 0);
  t.equal((await s.api('POST', '/default_streams', member, { stream_id: id })).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('POST', '/default_streams', admin, { stream_id: id })).status, 200);
  t.equal(await listDefaults(), 1);
  t.equal((await s.api('POST', '/default_streams', admin, { stream_id: 424242 })).body.msg, 'Invalid channel ID');
  const secret = await create(s, admin, 'secret-default', { invite_only: true });
  t.equal((await s.api('POST', '/default_streams', admin, { stream_id: secret })).body.msg, 'Private channels cannot be made default.');
  await s.api('DELETE', '/default_streams', admin, { stream_id: id });

  // Unknown channel.
  const missing = await s.api('PATCH', '/streams/999999', admin, { description: 'x' });
  t.equal(missing.status, 400);
  t.equal(missing.body.msg, 'Invalid channel ID');
  t.equal((await s.api('PATCH', '/streams/abc', admin, { description: 'x' })).status, 404, 'an integer in the path takes digits only: no route');
});

t.test('administrators and private channels', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const id = await create(s, member, 'private', { invite_only: true });
  const patch = (params: Record<string, unknown>, as: TestUser = admin) => s.api('PATCH', `/streams/${id}`, as, params);
  // Name and description: any administrator.
  t.equal((await patch({ description: 'by admin' })).status, 200);
  // Permissions: only a subscribed administrator.
  t.equal((await patch({ is_private: false })).body.msg, 'Invalid channel ID');
  t.equal((await patch({ history_public_to_subscribers: true })).body.msg, 'Invalid channel ID');
  t.equal((await patch({ can_remove_subscribers_group: await groupId(s, 'role:members') })).body.msg, 'Invalid channel ID');
  // Non-administrators: subscribers are told they need to be one, others learn nothing.
  const sub = await patch({ description: 'x' }, member);
  t.equal(sub.body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal(sub.body.msg, 'Must be an organization administrator');
  t.equal((await patch({ description: 'x' }, outsider)).body.msg, 'Invalid channel ID');
  await s.api('POST', '/users/me/subscriptions', member, { subscriptions: [{ name: 'private' }], principals: [admin.id] });
  t.equal((await patch({ is_private: false })).status, 200);
});

t.test('archiving', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const id = await create(s, member, 'old', { is_default_stream: undefined });
  t.equal((await s.api('DELETE', `/streams/${id}`, member)).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('DELETE', `/streams/${id}`, admin)).status, 200);
  t.equal((await s.api('GET', `/streams/${id}`, member)).body.msg, 'Invalid channel ID');
  // An administrator is told it is archived already; anyone else learns nothing.
  t.equal((await s.api('DELETE', `/streams/${id}`, admin)).body.msg, 'Channel is already deactivated');
  t.equal((await s.api('DELETE', `/streams/${id}`, member)).body.msg, 'Invalid channel ID');
  t.same((await s.api('GET', '/users/me/subscriptions', member)).body.subscriptions, []);
  t.equal((await s.api('PATCH', `/streams/${id}`, admin, { description: 'x' })).body.msg, 'Invalid channel ID');
  // The name is free again.
  const again = await create(s, member, 'old');
  t.not(again, id);
  t.equal((await s.api('DELETE', '/streams/999999', admin)).body.msg, 'Invalid channel ID');
});

t.test('removing other subscribers', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: member.id });
  const id = await create(s, member, 'room', { principals: [member.id, other.id, bot.id] });
  const remove = (as: TestUser, who: TestUser) => s.api('DELETE', '/users/me/subscriptions', as, { subscriptions: ['room'], principals: [who.id] });
  t.equal((await remove(member, other)).body.msg, 'Insufficient permission');
  t.same((await remove(member, bot)).body.removed, ['room'], 'own bot');
  // Members of can_remove_subscribers_group may remove others.
  await s.api('PATCH', `/streams/${id}`, admin, { can_remove_subscribers_group: await groupId(s, 'role:members') });
  t.same((await remove(member, other)).body.removed, ['room']);
  t.same((await s.api('GET', `/streams/${id}/members`, admin)).body.subscribers, [member.id]);
  t.same((await remove(admin, member)).body.removed, ['room']);
});
