import t, { type Test } from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, subscribe, unsubscribe } from '../helpers/channels-fixture.js';

/**
 * A role change moves which channels the user sees without being subscribed (the real server's
 * send_stream_events_for_role_update, test_events.py test_change_is_admin / _is_owner /
 * _is_moderator / _is_guest): administrators see every private channel, guests only what they are
 * subscribed to plus web-public channels, moderators what members see.
 */

// 'realm' so the client can recompute its can_* permissions from the new role.
const TYPES = ['realm', 'realm_user', 'stream', 'subscription'];
const plain = { event_types: TYPES, fetch_event_types: TYPES };
const withSubscribers = { ...plain, include_subscribers: true };
const REGISTERS = [plain, withSubscribers];

interface World {
  s: TestServer;
  subject: TestUser;
  other: TestUser;
  ids: Record<string, number>;
}

/**
 * lobby: public, the subject subscribed; open: public, only `other`; web: web-public, only `other`;
 * secret: private, only `other`; quiet: private, nobody; mine: private, the subject and `other`;
 * gone: private, archived.
 */
async function world(t: Test, role: number): Promise<World> {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true });
  await setRealmProperties(s, { enable_spectator_access: true });
  const subject = await s.user(Role.MEMBER, 'Subject');
  const other = await s.user(Role.MEMBER, 'Other');
  const ids: Record<string, number> = {};
  ids.lobby = await createChannel(s, s.owner, 'lobby', [subject, other]);
  ids.open = await createChannel(s, other, 'open', []);
  ids.web = await createChannel(s, s.owner, 'web', [other], { is_web_public: true });
  ids.secret = await createChannel(s, other, 'secret', [], { invite_only: true });
  ids.quiet = await createChannel(s, s.owner, 'quiet', [], { invite_only: true });
  await unsubscribe(s, s.owner, 'quiet', [s.owner]);
  ids.mine = await createChannel(s, other, 'mine', [subject], { invite_only: true });
  ids.gone = await createChannel(s, s.owner, 'gone', [other], { invite_only: true });
  t.equal((await s.api('DELETE', `/streams/${ids.gone}`, s.owner)).status, 200);
  await unsubscribe(s, s.owner, 'lobby', [s.owner]);
  if (role !== Role.MEMBER) t.equal((await s.api('PATCH', `/users/${subject.id}`, s.owner, { role })).status, 200);
  return { s, subject, other, ids };
}

const setRole = (w: World, role: number) => async () => {
  const res = await w.s.api('PATCH', `/users/${w.subject.id}`, w.s.owner, { role });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
};

const streamEvents = (events: Array<Record<string, any>>) => events.filter((e) => e.type === 'stream' || e.type === 'subscription');
const ids = (event: Record<string, any>) => event.streams.map((s: { stream_id: number }) => s.stream_id);

t.test('member to administrator and back: private channels come into view and leave it', async (t) => {
  const w = await world(t, Role.MEMBER);
  for (const register of REGISTERS) {
    const promoted = await verifyAction(t, w.s, w.subject, setRole(w, Role.ADMINISTRATOR), { register });
    t.match(promoted[0], { type: 'realm_user', op: 'update', person: { user_id: w.subject.id, role: Role.ADMINISTRATOR } });
    t.same(Object.keys(promoted[0]!.person).sort(), ['role', 'user_id'], 'the role event carries the role alone');
    const changes = streamEvents(promoted);
    t.equal(changes.length, 2, 'one create, one peer_add: quiet has no subscribers');
    t.match(changes[0], { type: 'stream', op: 'create' });
    t.same(ids(changes[0]!), [w.ids.secret, w.ids.quiet], 'private channels not subscribed to; not the archived one');
    t.match(changes[0]!.streams[0], { name: 'secret', invite_only: true, stream_weekly_traffic: null });
    t.same(changes[1], { type: 'subscription', op: 'peer_add', stream_ids: [w.ids.secret], user_ids: [w.other.id], id: changes[1]!.id });

    const demoted = await verifyAction(t, w.s, w.subject, setRole(w, Role.MEMBER), { register });
    const gone = streamEvents(demoted);
    t.equal(gone.length, 1);
    t.match(gone[0], { type: 'stream', op: 'delete', stream_ids: [w.ids.secret, w.ids.quiet] }, 'not mine: still subscribed');
  }
});

t.test('owners see what administrators see; moderators what members see', async (t) => {
  const w = await world(t, Role.MEMBER);
  const register = withSubscribers;
  t.same(streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.MODERATOR), { register })), [], 'member to moderator');
  const toAdmin = streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.ADMINISTRATOR), { register }));
  t.same(ids(toAdmin[0]!), [w.ids.secret, w.ids.quiet], 'moderator to administrator');
  t.same(streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.OWNER), { register })), [], 'administrator to owner');
  const toModerator = streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.MODERATOR), { register }));
  t.match(toModerator, [{ type: 'stream', op: 'delete', stream_ids: [w.ids.secret, w.ids.quiet] }], 'owner to moderator');
  t.same(streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.MEMBER), { register })), [], 'moderator to member');
});

t.test('member to guest and back: public channels not subscribed to leave view and return', async (t) => {
  const w = await world(t, Role.MEMBER);
  for (const register of REGISTERS) {
    const guest = streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.GUEST), { register }));
    t.equal(guest.length, 1);
    t.match(guest[0], { type: 'stream', op: 'delete', stream_ids: [w.ids.open] }, 'not lobby (subscribed) nor web (web-public)');

    const member = streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.MEMBER), { register }));
    t.match(member, [
      { type: 'stream', op: 'create', streams: [{ stream_id: w.ids.open, invite_only: false }] },
      { type: 'subscription', op: 'peer_add', stream_ids: [w.ids.open], user_ids: [w.other.id] },
    ]);
    t.equal(member.length, 2);
  }
});

t.test('guest to administrator and back: public and private channels together', async (t) => {
  const w = await world(t, Role.GUEST);
  const register = withSubscribers;
  const up = streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.ADMINISTRATOR), { register }));
  t.same(ids(up[0]!), [w.ids.open, w.ids.secret, w.ids.quiet]);
  t.same(up.slice(1).map((e) => e.stream_ids), [[w.ids.open], [w.ids.secret]], 'a peer_add for each channel with subscribers');
  const down = streamEvents(await verifyAction(t, w.s, w.subject, setRole(w, Role.GUEST), { register }));
  t.match(down, [{ type: 'stream', op: 'delete', stream_ids: [w.ids.open, w.ids.secret, w.ids.quiet] }]);
});

t.test('others hear of the role alone', async (t) => {
  const w = await world(t, Role.MEMBER);
  const events = await verifyAction(t, w.s, w.other, setRole(w, Role.ADMINISTRATOR), { register: withSubscribers });
  t.same(events.map((e) => ({ ...e, id: undefined })), [{ type: 'realm_user', op: 'update', person: { user_id: w.subject.id, role: Role.ADMINISTRATOR }, id: undefined }]);
});

t.test('a queue read long after the change gets the channels of that moment', async (t) => {
  const w = await world(t, Role.MEMBER);
  const register = withSubscribers;
  // Promoted, then: subscribed to secret, quiet archived, a new private channel, open made private.
  const later = await verifyAction(t, w.s, w.subject, async () => {
    await setRole(w, Role.ADMINISTRATOR)();
    await subscribe(w.s, w.other, 'secret', [w.subject]);
    t.equal((await w.s.api('DELETE', `/streams/${w.ids.quiet}`, w.s.owner)).status, 200);
    w.ids.fresh = await createChannel(w.s, w.other, 'fresh', [], { invite_only: true });
    t.equal((await w.s.api('PATCH', `/streams/${w.ids.open}`, w.s.owner, { is_private: true })).status, 200);
  }, { register });
  const creates = later.filter((e) => e.type === 'stream' && e.op === 'create');
  t.same(ids(creates[0]!), [w.ids.secret, w.ids.quiet], 'the role change names the channels of its moment');
  t.same(creates.flatMap(ids).filter((id: number) => id === w.ids.fresh).length, 1, 'a channel created later arrives once, by its own event');

  // Demoted, then: left mine, secret archived. Both were in view at the change and leave it then.
  const demoted = await verifyAction(t, w.s, w.subject, async () => {
    await setRole(w, Role.MEMBER)();
    await unsubscribe(w.s, w.subject, 'mine', [w.subject]);
    t.equal((await w.s.api('DELETE', `/streams/${w.ids.secret}`, w.s.owner)).status, 200);
  }, { register });
  const deletes = demoted.filter((e) => e.type === 'stream' && e.op === 'delete');
  t.same(deletes[0]!.stream_ids, [w.ids.open, w.ids.fresh], 'not mine nor secret: subscribed when demoted');
});

t.test('a private channel left before the promotion comes back as a former subscription', async (t) => {
  const w = await world(t, Role.MEMBER);
  await unsubscribe(w.s, w.subject, 'mine', [w.subject]);
  const before = await w.s.api('POST', '/register', w.subject, withSubscribers);
  t.notOk([...before.body.unsubscribed, ...before.body.never_subscribed].some((s: { stream_id: number }) => s.stream_id === w.ids.mine), 'out of view');
  await setRole(w, Role.ADMINISTRATOR)();
  const polled = await w.s.api('GET', '/events', w.subject, { queue_id: before.body.queue_id, last_event_id: before.body.last_event_id, dont_block: true });
  const create = polled.body.events.find((e: { type: string; op?: string }) => e.type === 'stream' && e.op === 'create');
  t.same(ids(create), [w.ids.secret, w.ids.quiet, w.ids.mine]);
  // The real server's own apply_event looks the former subscription up to file it under
  // `unsubscribed`; the event carries the channel alone.
  const after = await w.s.api('POST', '/register', w.subject, withSubscribers);
  t.match(after.body.unsubscribed, [{ stream_id: w.ids.mine, subscribers: [w.other.id] }]);
});

t.test('the real server order: the role, the groups, then the channels', async (t) => {
  const w = await world(t, Role.MEMBER);
  const types = [...TYPES, 'user_group', 'realm_user_groups'];
  const events = await verifyAction(t, w.s, w.subject, setRole(w, Role.ADMINISTRATOR), { register: { event_types: types, fetch_event_types: types } });
  // Leaving role:fullmembers is a log event of its own after the role change; clients get it with
  // the other group changes, before the channels, as test_change_is_admin expects.
  t.same(events.map((e) => `${e.type}/${e.op}`), [
    'realm_user/update', 'user_group/remove_members', 'user_group/add_members', 'user_group/remove_members', 'stream/create', 'subscription/peer_add',
  ]);
  t.equal(events[3]!.group_id, (await w.s.platform.db.selectFrom('user_groups').select('id').where('name', '=', 'role:fullmembers').executeTakeFirstOrThrow()).id, 'the third group event leaves role:fullmembers');
});
