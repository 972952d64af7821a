import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { setRealmProperties } from '../helpers/realm.js';

/**
 * Notification Bot's messages about channels (creation, being added by someone else, changes made
 * through PATCH /streams), as the real server words and addresses them.
 */

const BOT_EMAIL = 'notification-bot@zulip.com';

async function idOf(s: TestServer, as: TestUser, name: string): Promise<number> {
  return (await s.api('GET', '/get_stream_id', as, { stream: name })).body.stream_id;
}

/** The channel's messages as `as` sees them, oldest first, in Markdown source. */
async function channelMessages(s: TestServer, as: TestUser, streamId: number) {
  const res = await s.api('GET', '/messages', as, {
    anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: false, narrow: [{ operator: 'channel', operand: streamId }],
  });
  return res.body.messages as Array<{ content: string; subject: string; sender_email: string; flags: string[] }>;
}

async function directMessages(s: TestServer, as: TestUser) {
  const res = await s.api('GET', '/messages', as, { anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: false, narrow: [{ operator: 'is', operand: 'dm' }] });
  return res.body.messages as Array<{ content: string; sender_email: string }>;
}

function subscribe(s: TestServer, as: TestUser, names: string[], extra: Record<string, unknown> = {}) {
  return s.api('POST', '/users/me/subscriptions', as, { subscriptions: names.map((name) => ({ name })), ...extra });
}

t.test('a new channel gets a notice in its "channel events" topic, read for its creator', async (t) => {
  const s = await startTestServer(t, { webPublicStreamsEnabled: true }, { organization: 'full' });
  await setRealmProperties(s, { enable_spectator_access: true });
  const member = await s.user(Role.MEMBER, 'Mem');
  const other = await s.user(Role.MEMBER, 'Oth');

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['public-one', {}, 'Public'],
    ['private-one', { invite_only: true }, 'Private, protected history'],
    ['shared-one', { invite_only: true, history_public_to_subscribers: true }, 'Private, shared history'],
  ];
  for (const [name, extra, policy] of cases) {
    t.equal((await subscribe(s, member, [name], { principals: [member.id, other.id], ...extra })).status, 200);
    const id = await idOf(s, member, name);
    const mine = await channelMessages(s, member, id);
    t.equal(mine.length, 1, name);
    t.match(mine[0], {
      sender_email: BOT_EMAIL,
      subject: 'channel events',
      content: `**${policy}** channel created by @_**Mem|${member.id}**. **Description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``,
    });
    t.ok(mine[0]!.flags.includes('read'), 'read for the one who created it');
    t.notOk((await channelMessages(s, other, id))[0]!.flags.includes('read'), 'unread for the others');
  }

  // A description is quoted as given (its line breaks become spaces); web-public channels say so.
  await s.api('POST', '/users/me/subscriptions', s.owner, { subscriptions: [{ name: 'open', description: 'Come\nin' }], is_web_public: true });
  const open = await channelMessages(s, s.owner, await idOf(s, s.owner, 'open'));
  t.equal(open[0]!.content, `**Web-public** channel created by @_**Owner|${s.owner.id}**. **Description:**\n\`\`\`\` quote\nCome in\n\`\`\`\``);

  // Joining an existing channel posts nothing there.
  await subscribe(s, s.owner, ['public-one']);
  t.equal((await channelMessages(s, s.owner, await idOf(s, s.owner, 'public-one'))).length, 1);
});

t.test('with announce, the announcements channel hears first, then the new channel', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const member = await s.user(Role.MEMBER, 'Mem');
  await subscribe(s, member, ['fresh'], { announce: true });
  const general = await idOf(s, s.owner, 'general');
  const fresh = await idOf(s, member, 'fresh');
  const announced = (await channelMessages(s, s.owner, general)).filter((m) => m.subject === 'new channels');
  const created = await channelMessages(s, member, fresh);
  t.equal(announced.length, 1);
  t.equal(created.length, 1);
  const ids = await s.api('GET', '/messages', member, { anchor: 'newest', num_before: 2, num_after: 0, narrow: [] });
  t.same(ids.body.messages.map((m: { subject: string }) => m.subject), ['new channels', 'channel events'], 'the announcement is sent before the channel notice');
});

t.test('someone added to existing channels by another user gets a direct message', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const adder = await s.user(Role.MEMBER, 'Adder');
  const added = await s.user(Role.MEMBER, 'Added');
  const bot = await s.user(Role.MEMBER, 'Botty', { bot_type: 1, bot_owner_id: adder.id });
  await subscribe(s, adder, ['zeta', 'alpha']);

  await subscribe(s, adder, ['zeta'], { principals: [added.id, adder.id, bot.id] });
  let dms = await directMessages(s, added);
  t.equal(dms.length, 1);
  t.match(dms[0], { sender_email: BOT_EMAIL, content: `@**Adder|${adder.id}** subscribed you to the channel #**zeta**.` });
  t.same(await directMessages(s, adder), [], 'nobody is told about adding themself');

  // Several channels at once: one message listing them by name; a channel created by the same
  // request is not listed (its own notice says who created it); nothing for channels one was already in.
  await subscribe(s, adder, ['zeta', 'alpha', 'brand-new'], { principals: [added.id] });
  dms = await directMessages(s, added);
  t.equal(dms.length, 2);
  t.equal(dms[1]!.content, `@**Adder|${adder.id}** subscribed you to the channel #**alpha**.`, 'only alpha: zeta was held already, brand-new is new');
  await subscribe(s, adder, ['beta', 'gamma']);
  await subscribe(s, adder, ['gamma', 'beta'], { principals: [added.id] });
  t.equal((await directMessages(s, added))[2]!.content, `@**Adder|${adder.id}** subscribed you to the following channels:\n\n* #**beta**\n* #**gamma**`);

  // Creating channels for others only: no direct message.
  await subscribe(s, adder, ['created-for-you'], { principals: [added.id] });
  t.equal((await directMessages(s, added)).length, 3);
});

t.test('PATCH /streams changes are told in "channel events"', async (t) => {
  const s = await startTestServer(t, {}, { organization: 'full' });
  const member = await s.user(Role.MEMBER, 'Mem');
  await subscribe(s, s.owner, ['room'], { principals: [s.owner.id, member.id], invite_only: true });
  const id = await idOf(s, s.owner, 'room');
  const latest = async () => (await channelMessages(s, member, id)).slice(1).map((m) => { t.equal(m.subject, 'channel events'); return m.content; });
  const owner = `@_**Owner|${s.owner.id}**`;
  const patch = (params: Record<string, unknown>) => s.api('PATCH', `/streams/${id}`, s.owner, params);

  t.equal((await patch({ new_name: 'hall' })).status, 200);
  t.same(await latest(), [`${owner} renamed channel **room** to **hall**.`]);

  await patch({ description: 'Talk here' });
  await patch({ description: '' });
  const [, described, cleared] = await latest();
  t.equal(described, `${owner} changed the description for this channel.\n\n* **Old description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\`\n* **New description:**\n\`\`\`\` quote\nTalk here\n\`\`\`\``);
  t.equal(cleared, `${owner} changed the description for this channel.\n\n* **Old description:**\n\`\`\`\` quote\nTalk here\n\`\`\`\`\n* **New description:**\n\`\`\`\` quote\n*No description.*\n\`\`\`\``);

  // One request changing several things: access, retention period, posting policy, in that order.
  t.equal((await patch({ is_private: false, message_retention_days: 30, stream_post_policy: 2 })).status, 200);
  t.same((await latest()).slice(3), [
    `${owner} changed the [access permissions](/help/channel-permissions) for this channel from **Private, protected history** to **Public**.`,
    `${owner} has changed the [message retention period](/help/message-retention-policy) for this channel:\n* **Old retention period**: Forever\n`
      + '* **New retention period**: 30 days\n\nMessages in this channel will now be automatically deleted 30 days after they are sent.',
    `${owner} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n`
      + '* **Old permissions**: All channel members can post.\n* **New permissions**: Only organization administrators can post.',
  ]);
  await patch({ message_retention_days: 'unlimited', is_private: true, history_public_to_subscribers: true, stream_post_policy: 4 });
  t.same((await latest()).slice(6), [
    `${owner} changed the [access permissions](/help/channel-permissions) for this channel from **Public** to **Private, shared history**.`,
    `${owner} has changed the [message retention period](/help/message-retention-policy) for this channel:\n* **Old retention period**: 30 days\n`
      + '* **New retention period**: Forever\n\nMessages in this channel will now be retained forever.',
    `${owner} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n`
      + '* **Old permissions**: Only organization administrators can post.\n* **New permissions**: Only organization administrators and moderators can post.',
  ]);

  // Nothing changed, nothing said; a failed request says nothing either.
  await patch({ description: '', stream_post_policy: 4 });
  t.equal((await s.api('PATCH', `/streams/${id}`, member, { description: 'no' })).status, 400);
  t.equal((await latest()).length, 9);
});

t.test('an organization without Notification Bot gets no notices', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Mem');
  await subscribe(s, s.owner, ['quiet'], { principals: [s.owner.id, member.id] });
  const id = await idOf(s, s.owner, 'quiet');
  t.equal((await s.api('PATCH', `/streams/${id}`, s.owner, { new_name: 'still-quiet' })).status, 200);
  t.same(await channelMessages(s, member, id), []);
});
