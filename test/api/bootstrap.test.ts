import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { ensureOrganization } from '../../src/services/bootstrap.js';

async function channelMessages(s: TestServer, as: TestUser, channel: string) {
  const r = await s.api('GET', '/messages', as, { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: channel }], apply_markdown: false });
  if (r.status !== 200) throw new Error(`messages of #${channel}: ${JSON.stringify(r.body)}`);
  return r.body.messages as Array<Record<string, any>>;
}

async function headPosition(s: TestServer): Promise<number> {
  const row = await s.platform.db.selectFrom('events').select((eb) => eb.fn.max('position').as('p')).executeTakeFirstOrThrow();
  return Number(row.p);
}

t.test('a fresh organization starts as the real server does', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const streams = (await s.api('GET', '/streams', s.owner, { include_default: true })).body.streams as Array<Record<string, any>>;
  const general = streams.find((c) => c.name === 'general')!;
  const coreTeam = streams.find((c) => c.name === 'core team')!;
  t.ok(general && coreTeam, 'general and core team exist');
  t.equal(streams.length, 2);
  t.match(general, { invite_only: false, is_default: true, description: 'Everyone is added to this channel by default. Welcome! :octopus:' });
  t.match(coreTeam, { invite_only: true, is_default: false, description: 'A private channel for core team members.' });
  const subs = (await s.api('GET', '/users/me/subscriptions', s.owner)).body.subscriptions as Array<{ name: string }>;
  t.same(subs.map((x) => x.name).sort(), ['core team', 'general'], 'the owner is in both channels');

  const reg = await s.api('POST', '/register', s.owner, { fetch_event_types: ['realm', 'realm_user'] });
  t.equal(reg.status, 200);
  t.equal(reg.body.realm_new_stream_announcements_stream_id, general.stream_id, 'general is the announcements channel');
  t.equal(reg.body.realm_zulip_update_announcements_stream_id, general.stream_id);
  t.equal(reg.body.realm_signup_announcements_stream_id, coreTeam.stream_id);
  const bots = reg.body.cross_realm_bots as Array<Record<string, any>>;
  t.same(bots.map((b) => [b.email, b.full_name]), [['notification-bot@zulip.com', 'Notification Bot'], ['welcome-bot@zulip.com', 'Welcome Bot']]);
  for (const bot of bots) t.match(bot, { is_bot: true, is_system_bot: true, bot_type: 1, bot_owner_id: null, is_admin: false, delivery_email: bot.email });
  const realmUserIds = (reg.body.realm_users as Array<{ user_id: number }>).map((u) => u.user_id);
  t.same(realmUserIds, [s.owner.id], 'system bots are not among realm_users');
  const users = (await s.api('GET', '/users', s.owner)).body.members as Array<{ user_id: number }>;
  t.same(users.map((u) => u.user_id), [s.owner.id], 'nor among GET /users');
  t.same((await s.api('GET', '/bots', s.owner)).body, { result: 'success', msg: '', bots: [] }, 'nor among the owner\'s bots');
  const groups = (await s.api('GET', '/user_groups', s.owner)).body.user_groups as Array<{ members: number[] }>;
  t.notOk(groups.some((g) => g.members.some((id) => bots.some((b) => b.user_id === id))), 'nor in any group of the organization');

  const welcome = bots[1]!;
  const inGeneral = await channelMessages(s, s.owner, 'general');
  t.same(inGeneral.map((m) => [m.sender_id, m.subject]), [
    [welcome.user_id, 'topic demonstration'],
    [welcome.user_id, 'topic demonstration'],
    [welcome.user_id, 'swimming turtles'],
    [welcome.user_id, 'Zulip updates'],
  ]);
  t.equal(inGeneral[0]!.content, 'This is a message on channel #**general** with the topic `topic demonstration`.');
  t.equal(inGeneral[0]!.client, 'Internal');
  t.match(inGeneral[2]!.reactions, [{ emoji_name: 'turtle', user_id: welcome.user_id }], 'Welcome Bot reacts to its turtle');
  const inCoreTeam = await channelMessages(s, s.owner, 'core team');
  t.same(inCoreTeam.map((m) => [m.sender_id, m.subject]), [[welcome.user_id, 'private channels']]);
  t.match(inCoreTeam[0]!.content, /^This is a private channel, as indicated by the lock icon next to the channel name\./);
  t.ok(inCoreTeam[0]!.id < inGeneral[0]!.id, 'sent in the real server\'s order');

  // A newcomer joins general (the default channel) and can chat at once; core team stays private.
  const ann = await s.user(Role.MEMBER, 'Ann');
  const annSubs = (await s.api('GET', '/users/me/subscriptions', ann)).body.subscriptions as Array<{ name: string }>;
  t.same(annSubs.map((x) => x.name), ['general']);
  t.equal((await channelMessages(s, ann, 'general')).length, 4, 'the welcome messages are in her history');
  const sent = await s.api('POST', '/messages', ann, { type: 'stream', to: 'general', topic: 'hello', content: 'Hi all' });
  t.equal(sent.status, 200);
  const hidden = await s.api('GET', '/messages', ann, { anchor: 'oldest', num_before: 0, num_after: 100, narrow: [{ operator: 'channel', operand: coreTeam.stream_id }] });
  t.same(hidden.body.messages ?? [], [], 'core team is not hers to read');

  // The system bots are the server's: an administrator cannot deactivate or rename them.
  const del = await s.api('DELETE', `/users/${welcome.user_id}`, s.owner);
  t.equal(del.status, 400);
  t.equal(del.body.msg, 'No such user');
  // They can be messaged, as on the real server.
  t.equal((await s.api('POST', '/messages', ann, { type: 'private', to: JSON.stringify(['welcome-bot@zulip.com']), content: 'hi' })).status, 200);
});

t.test('a second start adds nothing; an organization created without the full setup is left alone', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const tables = allProjections.flatMap((p) => p.tables);
  const head = await headPosition(s);
  const before = await tableChecksums(s.platform.db, tables);
  const again = await ensureOrganization(s.platform, { writeZuliprc: false, setup: 'full' });
  t.equal(again.created, false);
  t.equal(await headPosition(s), head, 'no event appended by the second start');
  t.same(await tableChecksums(s.platform.db, tables), before);

  // A renamed or archived initial channel is not created again.
  const streams = (await s.api('GET', '/streams', s.owner)).body.streams as Array<{ name: string; stream_id: number }>;
  const general = streams.find((c) => c.name === 'general')!;
  const coreTeam = streams.find((c) => c.name === 'core team')!;
  t.equal((await s.api('PATCH', `/streams/${general.stream_id}`, s.owner, { new_name: 'lobby' })).status, 200);
  t.equal((await s.api('DELETE', `/streams/${coreTeam.stream_id}`, s.owner)).status, 200);
  const head2 = await headPosition(s);
  await ensureOrganization(s.platform, { writeZuliprc: false, setup: 'full' });
  t.equal(await headPosition(s), head2, 'a renamed general and an archived core team are not recreated');

  // An organization that was not created for the full setup (one from before it existed) gets nothing.
  const plain = await startTestServer(t);
  const plainHead = await headPosition(plain);
  await ensureOrganization(plain.platform, { writeZuliprc: false, setup: 'full' });
  t.equal(await headPosition(plain), plainHead, 'no bots, channels or messages added to it');
});

t.test('the bootstrap replays to identical read tables', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  t.ok(before.find((x) => x.table === 'messages')!.rows >= 5);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild');
});

t.test('announce: Notification Bot tells the announcements channel about new channels', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const notificationBot = (await s.api('POST', '/register', s.owner, { fetch_event_types: ['realm_user'] })).body.cross_realm_bots[0];
  const ann = await s.user(Role.MEMBER, 'Ann');
  const announcements = async () => (await channelMessages(s, s.owner, 'general')).filter((m) => m.subject === 'new channels');

  t.equal((await s.api('POST', '/users/me/subscriptions', ann, { subscriptions: [{ name: 'design' }], announce: true })).status, 200);
  let got = await announcements();
  t.equal(got.length, 1);
  t.match(got[0], { sender_id: notificationBot.user_id, sender_email: 'notification-bot@zulip.com', content: `@_**Ann|${ann.id}** created a new channel #**design**.` });

  await s.api('POST', '/users/me/subscriptions', ann, { subscriptions: [{ name: 'ops' }, { name: 'qa' }, { name: 'design' }], announce: true });
  got = await announcements();
  t.equal(got.length, 2);
  t.equal(got[1]!.content, `@_**Ann|${ann.id}** created the following channels: #**ops**, #**qa**.`, 'only the channels created now');

  await s.api('POST', '/users/me/subscriptions', ann, { subscriptions: [{ name: 'design' }], announce: true });
  await s.api('POST', '/users/me/subscriptions', ann, { subscriptions: [{ name: 'quiet' }] });
  await s.api('POST', '/users/me/subscriptions', ann, { subscriptions: [{ name: 'quieter' }], announce: false });
  t.equal((await announcements()).length, 2, 'nothing when nothing was created or announce is off');

  // No announcements channel: the request succeeds and nothing is sent.
  const general = (await s.api('GET', '/streams', s.owner)).body.streams.find((c: { name: string }) => c.name === 'general');
  t.equal((await s.api('DELETE', `/streams/${general.stream_id}`, s.owner)).status, 200);
  // (The new channel still gets its own notice in its "channel events" topic.)
  const announced = () => s.platform.db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).where('topic', '=', 'new channels').executeTakeFirstOrThrow();
  const count = await announced();
  t.equal((await s.api('POST', '/users/me/subscriptions', ann, { subscriptions: [{ name: 'later' }], announce: true })).status, 200);
  const count2 = await announced();
  t.equal(Number(count2.n), Number(count.n), 'no message when the announcements channel is archived');
});

t.test('announce in an organization without an announcements channel sends nothing', async (t) => {
  const s = await startTestServer(t);
  const r = await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'x' }], announce: true });
  t.equal(r.status, 200);
  t.equal(r.body.announce, undefined);
  const count = await s.platform.db.selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  t.equal(Number(count.n), 0);
});
