/**
 * A bot that sends to a channel that does not exist, or that nobody is subscribed to, gets its
 * answer as before, and Notification Bot tells the bot's owner (at most once a minute per bot).
 */
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel } from '../helpers/channels-fixture.js';

async function remindersTo(s: TestServer, owner: TestUser): Promise<string[]> {
  const narrow = JSON.stringify([{ operator: 'sender', operand: 'notification-bot@zulip.com' }, { operator: 'is', operand: 'dm' }]);
  const r = await s.api('GET', '/messages', owner, { anchor: 'newest', num_before: 50, num_after: 0, narrow, apply_markdown: 'false' });
  t.equal(r.status, 200);
  return (r.body.messages as Array<{ content: string }>).map((m) => m.content);
}

async function botOf(s: TestServer, owner: TestUser, name: string): Promise<TestUser & { email: string }> {
  const bot = await s.user(Role.MEMBER, name, { bot_type: 1, bot_owner_id: owner.id });
  const email = (await s.api('GET', `/users/${bot.id}`, owner)).body.user.email as string;
  return { ...bot, email };
}

t.test('a bot sending to a missing or empty channel: its owner is told, once a minute', async (t) => {
  // As `npm start` sets up an organization: with its system bots (Notification Bot).
  const s = await startTestServer(t, {}, { organization: 'full' });
  const owner = await s.user(Role.MEMBER, 'Owner');
  const human = await s.user(Role.MEMBER, 'Human');
  const named = await botOf(s, owner, 'Named Bot');
  const send = (as: TestUser, to: string | number) => s.api('POST', '/messages', as, { type: 'stream', to: typeof to === 'number' ? JSON.stringify(to) : to, topic: 't', content: 'hello' });

  const missing = await send(named, 'nowhere');
  t.equal(missing.status, 400);
  t.equal(missing.body.msg, "Channel 'nowhere' does not exist", 'the bot gets the usual answer');
  t.same(await remindersTo(s, owner), [
    `Your bot \`${named.email}\` tried to send a message to channel #**nowhere**, but that channel does not exist. Click [here](#channels/new) to create it.`,
  ]);
  t.equal((await send(named, 'elsewhere')).status, 400);
  t.equal((await remindersTo(s, owner)).length, 1, 'not again within a minute');

  const byId = await botOf(s, owner, 'Id Bot');
  t.equal((await send(byId, 987654)).status, 400);
  t.match((await remindersTo(s, owner)).at(-1), `Your bot \`${byId.email}\` tried to send a message to channel ID 987654, but there is no channel with that ID.`);

  const empty = await botOf(s, owner, 'Empty Bot');
  await createChannel(s, s.owner, 'deserted', []);
  await s.api('DELETE', '/users/me/subscriptions', s.owner, { subscriptions: JSON.stringify(['deserted']) });
  const sent = await send(empty, 'deserted');
  t.equal(sent.status, 200, 'a public channel with no subscribers still takes the message');
  t.equal((await remindersTo(s, owner)).at(-1), `Your bot \`${empty.email}\` tried to send a message to channel #**deserted**. The channel exists but does not have any subscribers.`);

  t.equal((await send(human, 'nowhere')).status, 400);
  t.equal((await remindersTo(s, owner)).length, 3, 'people sending to a missing channel remind nobody');
  t.same(await remindersTo(s, human), [], 'nor are they told anything');
});
