import t from 'tap';
import { decideRealmEmoji, evolveRealmEmoji, type RealmEmojiCommand, type RealmEmojiRow, type RealmEmojiState } from '../../../src/domain/realm-emoji/decider.js';
import type { RealmEmojiEvent } from '../../../src/domain/realm-emoji/events.js';
import { Role } from '../../../src/domain/roles.js';
import type { ChannelActor } from '../../../src/domain/channels/decider.js';

const member: ChannelActor = { user_id: 10, role: Role.MEMBER, is_full_member: true };
const admin: ChannelActor = { user_id: 11, role: Role.ADMINISTRATOR, is_full_member: true };
const given = (events: RealmEmojiEvent[], policy = 1): RealmEmojiState => ({
  realm_id: 1,
  emoji: events.reduce<RealmEmojiRow[]>(evolveRealmEmoji, []),
  add_custom_emoji_policy: policy,
});
const add = (name: string, actor = member, extra: Partial<Extract<RealmEmojiCommand, { type: 'AddRealmEmoji' }>> = {}): RealmEmojiCommand => ({
  type: 'AddRealmEmoji', actor, actor_is_bot: false, emoji_id: 5, name, files: [{ content_type: 'image/gif', size: 10 }], max_size_mib: 5,
  path_id: '1/ab/cdefghijklmnopqrstuvwxyz/emoji-5', still_path_id: null, overrides_builtin: false, ...extra,
});
const added: RealmEmojiEvent = {
  type: 'RealmEmojiAdded',
  data: { realm_id: 1, emoji_id: 3, name: 'parrot', author_id: 10, file_name: '3.png', path_id: 'p', content_type: 'image/png', still_path_id: null },
};

t.test('adding', async (t) => {
  t.same(decideRealmEmoji(add(' party parrot '), given([])), [{
    type: 'RealmEmojiAdded',
    data: { realm_id: 1, emoji_id: 5, name: 'party_parrot', author_id: 10, file_name: '5.gif', path_id: '1/ab/cdefghijklmnopqrstuvwxyz/emoji-5', content_type: 'image/gif',
      still_path_id: null },
  }]);
  const animated = decideRealmEmoji(add('parrot_2', member, { still_path_id: '1/ab/cdefghijklmnopqrstuvwxyz/emoji-5-still.png' }), given([]));
  t.equal(animated[0]?.type === 'RealmEmojiAdded' && animated[0].data.still_path_id, '1/ab/cdefghijklmnopqrstuvwxyz/emoji-5-still.png',
    'the event names the still image of an animated emoji');
  t.same(given(animated).emoji.map((e) => e.still_path_id), ['1/ab/cdefghijklmnopqrstuvwxyz/emoji-5-still.png']);
  t.throws(() => decideRealmEmoji(add('parrot'), given([added])), { message: 'A custom emoji with this name already exists.' });
  t.throws(() => decideRealmEmoji(add('x', member), given([], 2)), { message: 'Insufficient permission' });
  t.throws(() => decideRealmEmoji(add('smile', member, { overrides_builtin: true }), given([])), { message: 'Only administrators can override default emoji.' });
  t.equal(decideRealmEmoji(add('smile', admin, { overrides_builtin: true }), given([])).length, 1);
  t.throws(() => decideRealmEmoji(add('x', member, { files: [] }), given([])), { message: 'You must upload exactly one file.' });
  t.throws(() => decideRealmEmoji(add('x', { ...member, role: Role.GUEST }), given([])), { message: 'Not allowed for guest users' });
});

t.test('deactivating', async (t) => {
  const deactivate = (actor: typeof member, name = 'parrot'): RealmEmojiCommand => ({ type: 'DeactivateRealmEmoji', actor, name });
  t.same(decideRealmEmoji(deactivate(member), given([added])), [{ type: 'RealmEmojiDeactivated', data: { realm_id: 1, emoji_id: 3, name: 'parrot' } }]);
  t.equal(decideRealmEmoji(deactivate(admin), given([added])).length, 1);
  t.throws(() => decideRealmEmoji(deactivate({ ...member, user_id: 12 }), given([added])), { message: 'Must be an organization administrator or emoji author' });
  const gone: RealmEmojiEvent = { type: 'RealmEmojiDeactivated', data: { realm_id: 1, emoji_id: 3, name: 'parrot' } };
  t.throws(() => decideRealmEmoji(deactivate(admin), given([added, gone])), { message: "Emoji 'parrot' does not exist", status: 404 });
  t.equal(decideRealmEmoji(add('parrot'), given([added, gone])).length, 1, 'the name is free again');
});
