// Custom profile fields by the real server's rules (found by replaying its test_custom_profile_data.py
// against this server): field definitions of every type, choice and external-account data, the
// profile-summary limit, values checked by their field's type, and when events are sent.
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';

const T = { SHORT_TEXT: 1, LONG_TEXT: 2, SELECT: 3, DATE: 4, URL: 5, USER: 6, EXTERNAL_ACCOUNT: 7, PRONOUNS: 8 };
const editors = { 0: { text: 'Vim', order: '1' }, 1: { text: 'Emacs', order: '2' } };

async function field(s: TestServer, admin: TestUser, params: Record<string, unknown>): Promise<number> {
  const r = await s.api('POST', '/realm/profile_fields', admin, params);
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.id;
}

t.test('creating fields: checks in the real server\'s order and a new field\'s order is its id', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const error = async (params: Record<string, unknown>) => (await s.api('POST', '/realm/profile_fields', admin, params)).body.msg;
  t.match(await s.api('POST', '/realm/profile_fields', admin, { name: 'Phone', field_type: 'text id' }), { status: 400, body: { code: 'BAD_REQUEST' } });
  t.equal(await error({ name: '', field_type: 100 }), 'Label cannot be blank.');
  t.equal(await error({ name: '*'.repeat(41), field_type: 100 }), 'name is too long (limit: 40 characters)');
  t.equal(await error({ name: 'Phone', field_type: 100 }), 'Invalid field type.');
  t.equal(await error({ name: 'Phone', hint: '*'.repeat(81), field_type: T.SHORT_TEXT }), 'hint is too long (limit: 80 characters)');
  for (const type of [T.LONG_TEXT, T.USER]) {
    t.equal(await error({ name: 'Phone', field_type: type, display_in_profile_summary: true }), 'Field type not supported for display in profile summary.');
  }
  const phone = await field(s, admin, { name: 'Phone', hint: 'Contact number', field_type: T.SHORT_TEXT, display_in_profile_summary: true });
  const name = await field(s, admin, { name: 'Name ', field_type: T.SHORT_TEXT, display_in_profile_summary: true });
  const fields = (await s.api('GET', '/realm/profile_fields', admin)).body.custom_fields;
  t.match(fields, [{ id: phone, order: phone, name: 'Phone' }, { id: name, order: name, name: 'Name', field_data: '' }], 'the label is trimmed; order is the id');
  t.equal(await error({ name: 'Name', field_type: T.SHORT_TEXT, display_in_profile_summary: true }),
    'Only 2 custom profile fields can be displayed in the profile summary.', 'the limit is checked first');
  t.equal(await error({ name: 'Name', field_type: T.SHORT_TEXT }), 'A field with that label already exists.');
  t.equal((await s.api('POST', '/realm/profile_fields', admin, { name: 'name', field_type: T.SHORT_TEXT })).status, 200, 'labels differ by case');
  t.equal((await s.api('POST', '/realm/profile_fields', admin, { name: 'Pronouns', field_type: T.PRONOUNS })).status, 200);
  t.equal((await s.api('POST', '/realm/profile_fields', admin, { name: 'Mentor', field_type: T.USER })).status, 200);
  const member = await s.user(Role.MEMBER, 'Hamlet');
  t.equal((await s.api('POST', '/realm/profile_fields', member, { name: 'X', field_type: 1 })).body.msg, 'Must be an organization administrator');
});

t.test('choice fields: field_data is checked option by option', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const error = async (field_data: unknown) =>
    (await s.api('POST', '/realm/profile_fields', admin, { name: 'Favorite language', field_type: T.SELECT, field_data })).body.msg;
  t.equal(await error('invalid'), 'Argument "field_data" is not valid JSON.');
  t.equal(await error([1]), 'field_data is not a dict');
  t.equal(await error({ python: ['1'], java: ['2'] }), 'field_data contains a value that is not an allowed_type');
  t.equal(await error({ 0: { text: 'Python' }, 1: { text: 'Java' } }), 'order key is missing from field_data');
  t.equal(await error({ 0: { text: 'Python', order: '' }, 1: { text: 'Java', order: '2' } }), 'field_data["order"] cannot be blank.');
  t.equal(await error({ '': { text: 'Python', order: '1' }, 1: { text: 'Java', order: '2' } }), "'value' cannot be blank.");
  t.equal(await error({ 0: { text: 'Python', order: 1 } }), 'field_data contains a value that is not an allowed_type');
  t.equal(await error({ 0: 'Python' }), 'field_data is not a dict');
  t.equal(await error({ 0: { text: 'Python', order: '1', colour: 'red' } }), 'Unexpected arguments: colour');
  t.equal(await error({}), 'Field must have at least one choice.');
  t.equal((await s.api('POST', '/realm/profile_fields', admin, { name: 'Empty', field_type: T.SELECT })).body.msg, 'Field must have at least one choice.');
  t.equal(await error({ 0: { text: 'Same', order: '1' }, 1: { text: 'Same', order: '2' } }), 'Field must not have duplicate choices.');
  const id = await field(s, admin, { name: 'Favorite editor', field_type: T.SELECT, field_data: editors });
  const listed = (await s.api('GET', '/realm/profile_fields', admin)).body.custom_fields.find((f: any) => f.id === id);
  t.same(JSON.parse(listed.field_data), editors);
  t.equal((await s.api('PATCH', `/realm/profile_fields/${id}`, admin, { field_data: {} })).body.msg, 'Field must have at least one choice.');
});

t.test('external-account fields: a known service names itself and keeps its definition', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const error = async (field_data: unknown) =>
    (await s.api('POST', '/realm/profile_fields', admin, { name: 'Reddit', field_type: T.EXTERNAL_ACCOUNT, field_data })).body.msg;
  t.equal(await error({}), 'subtype key is missing from field_data');
  t.equal(await error({ subtype: '' }), 'field_data["subtype"] cannot be blank.');
  t.equal(await error({ subtype: '123' }), 'Invalid external account type');
  t.equal(await error({ subtype: 'linkedin' }), 'Invalid external account type');
  t.equal(await error({ subtype: 'custom' }), 'Custom external account must define URL pattern');
  t.equal(await error({ subtype: 'custom', url_pattern: 'invalid' }), "URL pattern must contain '%(username)s'.");
  t.equal(await error({ subtype: 'custom', url_pattern: 'https://www.reddit.com/%(username)s/user/%(username)s' }), "URL pattern must contain '%(username)s'.");
  t.equal(await error({ subtype: 'custom', url_pattern: 'reddit.com/%(username)s' }), 'field_data["url_pattern"] is not a URL');
  const reddit = await field(s, admin, { name: 'Reddit', field_type: T.EXTERNAL_ACCOUNT, field_data: { subtype: 'custom', url_pattern: 'https://www.reddit.com/user/%(username)s' } });

  const twitter = await field(s, admin, { name: 'Not this', hint: 'Nor this', field_type: T.EXTERNAL_ACCOUNT, field_data: { subtype: 'twitter' } });
  const fields = (await s.api('GET', '/realm/profile_fields', admin)).body.custom_fields;
  t.match(fields.find((f: any) => f.id === twitter), { name: 'Twitter username', hint: '', field_data: '{"subtype":"twitter"}' });
  t.match(fields.find((f: any) => f.id === reddit), { name: 'Reddit', field_data: '{"subtype":"custom","url_pattern":"https://www.reddit.com/user/%(username)s"}' });
  t.equal((await s.api('POST', '/realm/profile_fields', admin, { field_type: T.EXTERNAL_ACCOUNT, field_data: { subtype: 'twitter' } })).body.msg,
    'A field with that label already exists.');
  const update = async (params: Record<string, unknown>) => (await s.api('PATCH', `/realm/profile_fields/${twitter}`, admin, params)).body.msg;
  t.equal(await update({ name: 'Twitter' }), 'Default custom field cannot be updated.');
  t.equal(await update({ field_data: { subtype: 'github' } }), 'Default custom field cannot be updated.');
  t.equal(await update({ hint: 'Your handle' }), 'Default custom field cannot be updated.');
  t.equal((await s.api('PATCH', `/realm/profile_fields/${twitter}`, admin, {
    name: 'Twitter username', hint: '', field_data: { subtype: 'twitter' }, display_in_profile_summary: true,
  })).status, 200, 'the same values and the summary display may be sent');
});

t.test('updating fields: unnamed properties keep their values; the summary limit leaves the field itself out', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const phone = await field(s, admin, { name: 'Phone number', field_type: T.SHORT_TEXT });
  const editor = await field(s, admin, { name: 'Favorite editor', field_type: T.SELECT, field_data: editors });
  const birthday = await field(s, admin, { name: 'Birthday', field_type: T.DATE });
  const error = async (id: number, params: Record<string, unknown>) => (await s.api('PATCH', `/realm/profile_fields/${id}`, admin, params)).body.msg;
  t.equal(await error(100, { name: 'x' }), 'Field id 100 not found.');
  t.equal(await error(phone, { name: '' }), 'Label cannot be blank.');
  t.equal(await error(phone, { name: '*'.repeat(41) }), 'name is too long (limit: 40 characters)');
  t.equal(await error(phone, { display_in_profile_summary: 'invalid value' }), 'Argument "display_in_profile_summary" is not valid JSON.');
  t.equal(await error(editor, { field_data: { 0: 'Vim', 1: { order: '2', text: 'Emacs' } } }), 'field_data is not a dict');
  t.equal((await s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { name: 'New phone ', hint: 'Work', display_in_profile_summary: true, required: true })).status, 200);
  t.equal((await s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { hint: 'New hint' })).status, 200);
  t.equal((await s.api('PATCH', `/realm/profile_fields/${phone}`, admin, { display_in_profile_summary: true })).status, 200, 'already shown: not over the limit');
  t.equal((await s.api('PATCH', `/realm/profile_fields/${editor}`, admin, { display_in_profile_summary: true })).status, 200);
  t.equal(await error(birthday, { display_in_profile_summary: true }), 'Only 2 custom profile fields can be displayed in the profile summary.');
  t.equal(await error(birthday, { name: 'Favorite editor' }), 'A field with that label already exists.');
  t.match((await s.api('GET', '/realm/profile_fields', admin)).body.custom_fields.find((f: any) => f.id === phone),
    { name: 'New phone', hint: 'New hint', display_in_profile_summary: true, required: true });
  t.equal((await s.api('PATCH', `/realm/profile_fields/${birthday}`, admin, { hint: '' })).status, 200, 'an empty hint is a value');
});

t.test('values are checked by their field\'s type; errors name the field', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const cordelia = await s.user(Role.MEMBER, 'Cordelia');
  const gone = await s.user(Role.MEMBER, 'Gone');
  const bot = await s.user(Role.MEMBER, 'Bot', { bot_type: 1, bot_owner_id: cordelia.id });
  t.equal((await s.api('DELETE', `/users/${gone.id}`, admin)).status, 200);
  const ids = {
    phone: await field(s, admin, { name: 'Phone number', field_type: T.SHORT_TEXT }),
    bio: await field(s, admin, { name: 'Biography', field_type: T.LONG_TEXT }),
    editor: await field(s, admin, { name: 'Favorite editor', field_type: T.SELECT, field_data: editors }),
    birthday: await field(s, admin, { name: 'Birthday', field_type: T.DATE }),
    website: await field(s, admin, { name: 'Favorite website', field_type: T.URL }),
    mentor: await field(s, admin, { name: 'Mentor', field_type: T.USER }),
    github: await field(s, admin, { field_type: T.EXTERNAL_ACCOUNT, field_data: { subtype: 'github' } }),
    pronouns: await field(s, admin, { name: 'Pronouns', field_type: T.PRONOUNS }),
  };
  const error = async (id: number, value: unknown) => (await s.api('PATCH', '/users/me/profile_data', admin, { data: [{ id, value }] })).body.msg;
  t.equal(await error(1234, '12'), 'Field id 1234 not found.');
  t.equal(await error(ids.phone, 't'.repeat(51)), 'Phone number is too long (limit: 50 characters)');
  t.equal(await error(ids.pronouns, 't'.repeat(51)), 'Pronouns is too long (limit: 50 characters)');
  t.equal(await error(ids.bio, 't'.repeat(501)), 'Biography is too long (limit: 500 characters)');
  t.equal(await error(ids.birthday, 'a-b-c'), 'Birthday is not a date');
  t.equal(await error(ids.birthday, '1909-3-5'), 'Birthday is not a date');
  t.equal(await error(ids.birthday, '1909-02-30'), 'Birthday is not a date');
  t.equal(await error(ids.birthday, [123]), 'Birthday is not a string');
  t.equal(await error(ids.website, 'not URL'), 'Favorite website is not a URL');
  t.equal(await error(ids.editor, 'foobar'), "'foobar' is not a valid choice for 'Favorite editor'.");
  t.equal(await error(ids.mentor, [1000]), 'Invalid user ID: 1000');
  t.equal(await error(ids.mentor, [gone.id]), `User with ID ${gone.id} is deactivated`);
  t.equal(await error(ids.mentor, [bot.id]), `User with ID ${bot.id} is a bot`);
  t.equal(await error(ids.mentor, 'x'), 'User IDs is not a list');

  const data = [
    { id: ids.phone, value: '*short* text data' },
    { id: ids.bio, value: '~~short~~ **long** text data' },
    { id: ids.editor, value: '0' },
    { id: ids.birthday, value: '1909-03-05' },
    { id: ids.website, value: 'https://zulip.com' },
    { id: ids.mentor, value: [cordelia.id] },
    { id: ids.github, value: 'zulip-mobile' },
    { id: ids.pronouns, value: 'he/him' },
  ];
  t.equal((await s.api('PATCH', '/users/me/profile_data', admin, { data })).status, 200);
  const profile = (await s.api('GET', `/users/${admin.id}`, admin, { include_custom_profile_fields: true })).body.user.profile_data;
  t.same(profile[ids.phone], { value: '*short* text data', rendered_value: '<p><em>short</em> text data</p>' }, 'short text is Markdown');
  t.same(profile[ids.bio], { value: '~~short~~ **long** text data', rendered_value: '<p><del>short</del> <strong>long</strong> text data</p>' });
  t.same(profile[ids.editor], { value: '0' }, 'other types have no rendered form');
  t.same(profile[ids.mentor], { value: JSON.stringify([cordelia.id]) });
  t.same(profile[ids.github], { value: 'zulip-mobile' });
});

t.test('events: unchanged values and clearing what is not set send nothing; administrators clear with an empty value', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const phone = await field(s, admin, { name: 'Phone number', field_type: T.SHORT_TEXT });
  const editor = await field(s, admin, { name: 'Favorite editor', field_type: T.SELECT, field_data: editors });
  const register = { event_types: ['realm_user'], fetch_event_types: ['realm_user'] };
  const set = (data: unknown) => s.api('PATCH', '/users/me/profile_data', hamlet, { data });

  const first = await verifyAction(t, s, admin, () => set([{ id: phone, value: '123' }, { id: editor, value: '1' }]), { register });
  t.match(first, [
    { type: 'realm_user', op: 'update', person: { user_id: hamlet.id, custom_profile_field: { id: phone, value: '123', rendered_value: '<p>123</p>' } } },
    { type: 'realm_user', op: 'update', person: { user_id: hamlet.id, custom_profile_field: { id: editor, value: '1' } } },
  ]);
  t.same(await verifyAction(t, s, admin, () => set([{ id: phone, value: '123' }]), { register }), [], 'the same value again');

  const cleared = await verifyAction(t, s, admin, () => s.api('DELETE', '/users/me/profile_data', hamlet, { data: [phone] }), { register });
  t.match(cleared, [{ person: { user_id: hamlet.id, custom_profile_field: { id: phone, value: null } } }]);
  t.same(await verifyAction(t, s, admin, () => s.api('DELETE', '/users/me/profile_data', hamlet, { data: [phone] }), { register }), [], 'nothing to clear');
  t.equal((await s.api('DELETE', '/users/me/profile_data', hamlet, { data: [1234] })).body.msg, 'Field id 1234 not found.');

  // An administrator's empty value clears; the same through one's own endpoint is checked as a value.
  const byAdmin = await verifyAction(t, s, hamlet, () => s.api('PATCH', `/users/${hamlet.id}`, admin, { profile_data: [{ id: editor, value: '' }] }), { register });
  t.match(byAdmin, [{ person: { user_id: hamlet.id, custom_profile_field: { id: editor, value: null } } }]);
  t.equal((await set([{ id: editor, value: '' }])).body.msg, "'' is not a valid choice for 'Favorite editor'.");
  t.equal((await s.api('PATCH', `/users/${hamlet.id}`, admin, { profile_data: [{ id: editor, value: 'x' }] })).body.msg,
    "'x' is not a valid choice for 'Favorite editor'.", 'administrators are checked too');

  // A choice no longer offered is no longer anyone's value.
  t.equal((await set([{ id: editor, value: '0' }])).status, 200);
  t.equal((await s.api('PATCH', `/realm/profile_fields/${editor}`, admin, { field_data: { 1: { text: 'Emacs', order: '1' } } })).status, 200);
  const profile = (await s.api('GET', `/users/${hamlet.id}`, admin, { include_custom_profile_fields: true })).body.user.profile_data;
  t.notOk(String(editor) in profile, 'the removed choice went with the option');
});
