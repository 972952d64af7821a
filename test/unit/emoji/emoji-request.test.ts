// The real server's get_emoji_data and check_emoji_request over the catalogue, as user status uses them, and
// the upcast of stored reaction and status emoji names.
import t from 'tap';
import { builtinEmojiCatalog, checkEmojiRequest, emojiDataByName } from '../../../src/emoji/emoji-request.js';
import { decideUserStatus } from '../../../src/domain/user-status/decider.js';
import { currentSchemaVersion, upcast } from '../../../src/eventstore/upcast.js';
import type { StoredEvent } from '../../../src/eventstore/types.js';

const catalog = builtinEmojiCatalog([{ id: 7, name: 'smile', deactivated: false }, { id: 8, name: 'gone', deactivated: true }]);
const plain = builtinEmojiCatalog([]);

t.test('a name means the active custom emoji, then zulip, then the Unicode name', async (t) => {
  t.same(emojiDataByName('smile', catalog), { emoji_code: '7', reaction_type: 'realm_emoji' }, 'a custom emoji overrides');
  t.same(emojiDataByName('smile', plain), { emoji_code: '1f642', reaction_type: 'unicode_emoji' });
  t.same(emojiDataByName('up', plain), { emoji_code: '2b06', reaction_type: 'unicode_emoji' });
  t.same(emojiDataByName('zulip', plain), { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
  t.throws(() => emojiDataByName('gone', catalog), { message: "Emoji 'gone' does not exist" });
  t.throws(() => emojiDataByName('skin-tone-2', plain), { message: "Emoji 'skin-tone-2' does not exist" });
});

t.test('check_emoji_request', async (t) => {
  checkEmojiRequest({ emoji_name: 'north', emoji_code: '2b06', reaction_type: 'unicode_emoji' }, plain);
  t.throws(() => checkEmojiRequest({ emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' }, plain), { message: 'Invalid emoji name.' });
  t.throws(() => checkEmojiRequest({ emoji_name: 'thumbs_up', emoji_code: '1f44d-1f3fd', reaction_type: 'unicode_emoji' }, plain), { message: 'Invalid emoji code.' });
  t.throws(() => checkEmojiRequest({ emoji_name: 'x', emoji_code: 'x', reaction_type: 'x' }, plain), { message: 'Invalid emoji type.' });
  t.throws(() => checkEmojiRequest({ emoji_name: 'gone', emoji_code: '8', reaction_type: 'realm_emoji' }, catalog), { message: 'This custom emoji has been deactivated.' });
});

t.test('user status takes its emoji from the same catalogue', async (t) => {
  const cmd = { type: 'UpdateUserStatus' as const, user_id: 1, realm_id: 1 };
  t.match(decideUserStatus({ ...cmd, emoji_name: 'smile' }, plain), [{ data: { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' } }]);
  t.throws(() => decideUserStatus({ ...cmd, emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' }, plain), { message: 'Invalid emoji name.' });
});

const stored = (type: string, schema_version: number, data: Record<string, unknown>): StoredEvent => ({
  position: 1, event_id: 'e', stream_id: 's', stream_version: 1, type, schema_version, data,
  metadata: { actor_id: 1, realm_id: 1, client: 'test', request_id: 'r', time: '2026-01-01T00:00:00.000Z' }, hash: 'h',
});

t.test('stored names from before the catalogue are upcast; codes never change', async (t) => {
  for (const type of ['ReactionAdded', 'ReactionRemoved', 'UserStatusChanged']) t.equal(currentSchemaVersion(type), 2, `${type} is written as version 2`);
  const reaction = { message_id: 3, user_id: 1, emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' };
  t.same(upcast(stored('ReactionAdded', 1, reaction)).data, { ...reaction, emoji_name: 'big_smile' });
  t.same(upcast(stored('ReactionRemoved', 1, reaction)).data, { ...reaction, emoji_name: 'big_smile' });
  t.same(upcast(stored('ReactionAdded', 2, reaction)).data, reaction, 'a version 2 event is read as written');
  const custom = { ...reaction, emoji_name: 'smile', emoji_code: '7', reaction_type: 'realm_emoji' };
  t.same(upcast(stored('ReactionAdded', 1, custom)).data, custom, 'custom emoji keep their names');
  const clock = { ...reaction, emoji_name: 'clock12', emoji_code: '1f55b' };
  t.same(upcast(stored('ReactionAdded', 1, clock)).data, clock, 'a code outside the catalogue keeps its name');
  const status = { user_id: 1, realm_id: 1, away: null, status_text: null, emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' };
  t.same(upcast(stored('UserStatusChanged', 1, status)).data, { ...status, emoji_name: 'big_smile' });
  const unchanged = { ...status, emoji_name: null, emoji_code: null, reaction_type: null };
  t.same(upcast(stored('UserStatusChanged', 1, unchanged)).data, unchanged);
});
