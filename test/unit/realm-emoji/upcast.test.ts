import t from 'tap';
import { upcast } from '../../../src/eventstore/upcast.js';
import type { StoredEvent } from '../../../src/eventstore/types.js';
import { evolveRealmEmoji } from '../../../src/domain/realm-emoji/decider.js';
import { REALM_EMOJI_ADDED_SCHEMA_VERSION, type RealmEmojiEvent } from '../../../src/domain/realm-emoji/events.js';
import { formatRealmEmoji } from '../../../src/read/realm-emoji.js';

const stored = (schema_version: number, data: Record<string, unknown>): StoredEvent => ({
  position: 1, event_id: 'e', stream_id: 'realm-emoji-1', stream_version: 1, type: 'RealmEmojiAdded', schema_version, data,
  metadata: { actor_id: 10, realm_id: 1, client: 'test', request_id: 'r', time: '2026-01-01T00:00:00.000Z' }, hash: 'h',
});
const v1 = { realm_id: 1, emoji_id: 3, name: 'parrot', author_id: 10, file_name: '3.gif', path_id: 'p', content_type: 'image/gif' };

t.test('a version 1 RealmEmojiAdded (before still images) reads as one without a still image', async (t) => {
  const lifted = upcast(stored(1, v1));
  t.equal(lifted.schema_version, REALM_EMOJI_ADDED_SCHEMA_VERSION);
  t.same(lifted.data, { ...v1, still_path_id: null });
  const rows = evolveRealmEmoji([], lifted as unknown as RealmEmojiEvent);
  t.equal(formatRealmEmoji(1, rows)['3']?.still_url, null);
});

t.test('a current RealmEmojiAdded is read as written', async (t) => {
  const data = { ...v1, still_path_id: 'p-still.png' };
  t.same(upcast(stored(REALM_EMOJI_ADDED_SCHEMA_VERSION, data)).data, data);
  const rows = evolveRealmEmoji([], { type: 'RealmEmojiAdded', data });
  t.same(formatRealmEmoji(1, rows)['3'], {
    id: '3', name: 'parrot', source_url: '/user_avatars/1/emoji/images/3.gif', still_url: '/user_avatars/1/emoji/images/still/3.png',
    deactivated: false, author_id: 10,
  });
});
