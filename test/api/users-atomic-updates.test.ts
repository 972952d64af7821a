import t from 'tap';
import { sql } from 'kysely';
import { startTestServer, Role, type TestServer } from '../helpers/server.js';
import { PNG, sendFiles } from '../helpers/upload.js';

/** The user's stream after `afterVersion`: event types, and how many transactions wrote them (each stamps its own recorded_at). */
async function userStreamSince(s: TestServer, userId: number, afterVersion: number) {
  const rows = await s.platform.db.selectFrom('events').select(['type', sql<string>`recorded_at::text`.as('recorded_at')])
    .where('stream_id', '=', `user-${userId}`).where('stream_version', '>', afterVersion).orderBy('stream_version').execute();
  return { types: rows.map((r) => r.type), transactions: new Set(rows.map((r) => r.recorded_at)).size };
}

async function streamVersion(s: TestServer, userId: number): Promise<number> {
  const events = await s.platform.store.readStream(`user-${userId}`);
  return events.length;
}

t.test('PATCH /users/{id} changes role, name and profile in one append, or nothing', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const created = await s.api('POST', '/realm/profile_fields', s.owner, { name: 'Team', field_type: 1 });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const field = created.body.id as number;
  const before = await streamVersion(s, member.id);
  t.ok(before > 0, 'the user has a stream');

  const bad = await s.api('PATCH', `/users/${member.id}`, s.owner, {
    role: Role.MODERATOR, full_name: 'Renamed', profile_data: [{ id: field, value: 'Infra' }, { id: 999_999, value: 'x' }],
  });
  t.equal(bad.status, 400);
  t.equal(bad.body.msg, 'Field id 999999 not found.');
  t.same((await userStreamSince(s, member.id, before)).types, [], 'a bad profile field: no role, name or profile change was recorded');
  const unchanged = await s.api('GET', `/users/${member.id}`, s.owner, { include_custom_profile_fields: true });
  t.equal(unchanged.body.user.full_name, 'Member');
  t.equal(unchanged.body.user.role, Role.MEMBER);

  const badName = await s.api('PATCH', `/users/${member.id}`, s.owner, { role: Role.MODERATOR, full_name: 'bad*name' });
  t.equal(badName.status, 400);
  t.same((await userStreamSince(s, member.id, before)).types, [], 'a bad name: the role stays');

  const good = await s.api('PATCH', `/users/${member.id}`, s.owner, {
    role: Role.MODERATOR, full_name: 'Renamed', profile_data: [{ id: field, value: 'Infra' }],
  });
  t.equal(good.status, 200, JSON.stringify(good.body));
  const written = await userStreamSince(s, member.id, before);
  t.same(written.types, ['UserRoleChanged', 'UserRenamed', 'UserProfileDataChanged'], 'every change recorded');
  t.equal(written.transactions, 1, 'in one transaction');
  const after = await s.api('GET', `/users/${member.id}`, s.owner, { include_custom_profile_fields: true });
  t.equal(after.body.user.full_name, 'Renamed');
  t.equal(after.body.user.role, Role.MODERATOR);
  t.same(after.body.user.profile_data[String(field)], { value: 'Infra', rendered_value: '<p>Infra</p>' }, 'short text is Markdown too');
});

t.test('PATCH /users/me/profile_data sets every field or none', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const team = (await s.api('POST', '/realm/profile_fields', s.owner, { name: 'Team', field_type: 1 })).body.id as number;
  const about = (await s.api('POST', '/realm/profile_fields', s.owner, { name: 'About', field_type: 2 })).body.id as number;
  const before = await streamVersion(s, member.id);

  const tooLong = await s.api('PATCH', '/users/me/profile_data', member, { data: [{ id: team, value: 'Infra' }, { id: about, value: 'x'.repeat(501) }] });
  t.equal(tooLong.status, 400);
  t.equal(tooLong.body.msg, 'About is too long (limit: 500 characters)', 'a long text field holds 500 characters, as on the real server');
  t.same((await userStreamSince(s, member.id, before)).types, [], 'the valid field was not set either');

  const both = await s.api('PATCH', '/users/me/profile_data', member, { data: [{ id: team, value: 'Infra' }, { id: about, value: 'I *like* tests' }] });
  t.equal(both.status, 200, JSON.stringify(both.body));
  const written = await userStreamSince(s, member.id, before);
  t.same(written.types, ['UserProfileDataChanged', 'UserProfileDataChanged']);
  t.equal(written.transactions, 1, 'in one transaction');
  const read = await s.api('GET', `/users/${member.id}`, member, { include_custom_profile_fields: true });
  t.equal(read.body.user.profile_data[String(team)].value, 'Infra');
  t.same(read.body.user.profile_data[String(about)], { value: 'I *like* tests', rendered_value: '<p>I <em>like</em> tests</p>' }, 'rendered as Markdown');
});

t.test('PATCH /bots/{id} changes every field or none', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bot = await s.api('POST', '/bots', alice, { full_name: 'Helper', short_name: 'helper', bot_type: 1 });
  t.equal(bot.status, 200, JSON.stringify(bot.body));
  const botId = bot.body.user_id as number;
  const before = await streamVersion(s, botId);

  const badChannel = await s.api('PATCH', `/bots/${botId}`, alice, { full_name: 'Renamed Helper', default_sending_stream: 'no such channel' });
  t.equal(badChannel.status, 400, JSON.stringify(badChannel.body));
  t.same((await userStreamSince(s, botId, before)).types, [], 'a bad default channel: the name stays');

  const twoFiles = await sendFiles(s, alice, 'PATCH', `/bots/${botId}`, [{ field: 'a', data: PNG }, { field: 'b', data: PNG }], { full_name: 'Renamed Helper' });
  t.equal(twoFiles.body.msg, 'You may only upload one file at a time');
  t.same((await userStreamSince(s, botId, before)).types, [], 'two files: the name stays');
  const withFile = await sendFiles(s, alice, 'PATCH', `/bots/${botId}`, [{ field: 'a', data: PNG }], { full_name: 'Pictured Helper' });
  t.equal(withFile.status, 200, JSON.stringify(withFile.body));
  t.equal(withFile.body.full_name, 'Pictured Helper', 'fields sent with a file are applied');
  const withFileAt = before + (await userStreamSince(s, botId, before)).types.length;

  const good = await s.api('PATCH', `/bots/${botId}`, alice, { full_name: 'Renamed Helper', default_all_public_streams: true });
  t.equal(good.status, 200, JSON.stringify(good.body));
  t.equal(good.body.full_name, 'Renamed Helper');
  t.equal(good.body.default_all_public_streams, true);
  const written = await userStreamSince(s, botId, withFileAt);
  t.same(written.types, ['UserRenamed', 'BotDefaultChanged']);
  t.equal(written.transactions, 1, 'in one transaction');
});
