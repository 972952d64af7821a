import t from 'tap';
import { decidePing, parseStatus, type LastSeen } from '../../../src/domain/presence/decider.js';
import { decideUserStatus, type EmojiCatalog } from '../../../src/domain/user-status/decider.js';

const seen = (active: number | null, connected: number, logged: 'active' | 'idle'): LastSeen => ({ last_active_time: active, last_connected_time: connected, logged_status: logged });

t.test('decidePing: when a ping is news', async (t) => {
  t.match(decidePing(undefined, 'active', 1000), { write: true, changed: 'active', next: seen(1000, 1000, 'active') });
  t.match(decidePing(undefined, 'idle', 1000), { write: true, changed: 'idle', next: seen(null, 1000, 'idle') });
  // Several windows of one user within 55 s: nothing moves.
  t.match(decidePing(seen(1000, 1000, 'active'), 'active', 1030), { write: false, changed: null });
  // A minute later: the times move, nobody needs to know.
  t.match(decidePing(seen(1000, 1000, 'active'), 'active', 1060), { write: true, changed: null, next: seen(1060, 1060, 'active') });
  t.match(decidePing(seen(1000, 1000, 'active'), 'idle', 1060), { write: true, changed: null, next: seen(1000, 1060, 'active') });
  // Idle with the last activity over 70 s ago: went idle.
  t.match(decidePing(seen(1000, 1060, 'active'), 'idle', 1080), { changed: 'idle', next: seen(1000, 1080, 'idle') });
  // Already logged idle, still connected: nothing.
  t.match(decidePing(seen(1000, 1080, 'idle'), 'idle', 1140), { changed: null });
  // Offline (last connection over 140 s ago), back idle: logged.
  t.match(decidePing(seen(1000, 1080, 'idle'), 'idle', 1300), { changed: 'idle', next: seen(1000, 1300, 'idle') });
  // Active after more than 70 s without activity: came online.
  t.match(decidePing(seen(1000, 1300, 'idle'), 'active', 1310), { changed: 'active', next: seen(1310, 1310, 'active') });
  t.match(decidePing(seen(1250, 1300, 'idle'), 'active', 1310), { changed: null }, 'active 60 s ago: no news');
});

t.test('parseStatus', async (t) => {
  t.equal(parseStatus('idle'), 'idle');
  t.throws(() => parseStatus('Active'), { message: 'Invalid status: Active' });
});

t.test('decideUserStatus', async (t) => {
  const catalog: EmojiCatalog = {
    codeOfName: (name) => ({ car: '1f697', smile: '1f642' })[name],
    isCode: (code) => ['1f697', '1f642'].includes(code),
    custom: [{ id: 7, name: 'party', deactivated: false }, { id: 8, name: 'old', deactivated: true }],
  };
  const cmd = { type: 'UpdateUserStatus' as const, user_id: 3, realm_id: 1 };
  t.match(decideUserStatus({ ...cmd, emoji_name: 'party' }, catalog), [{ data: { emoji_code: '7', reaction_type: 'realm_emoji', status_text: null, away: null } }]);
  t.throws(() => decideUserStatus({ ...cmd, emoji_name: 'old' }, catalog), { message: "Emoji 'old' does not exist" });
  t.throws(() => decideUserStatus({ ...cmd, emoji_name: 'old', emoji_code: '8', reaction_type: 'realm_emoji' }, catalog), { message: 'This custom emoji has been deactivated.' });
  t.throws(() => decideUserStatus({ ...cmd, emoji_name: 'partyy', emoji_code: '7', reaction_type: 'realm_emoji' }, catalog), { message: 'Invalid custom emoji name.' });
  t.match(decideUserStatus({ ...cmd, emoji_name: '', emoji_code: 'ignored' }, catalog), [{ data: { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' } }]);
  t.match(decideUserStatus({ ...cmd, status_text: '  x  ', away: false }, catalog), [{ data: { status_text: 'x', away: false, emoji_name: null } }]);
  // As on the real server, the text is trimmed before its length is checked.
  t.match(decideUserStatus({ ...cmd, status_text: 'a'.repeat(60) + ' ' }, catalog), [{ data: { status_text: 'a'.repeat(60) } }]);
  t.throws(() => decideUserStatus({ ...cmd, status_text: 'a'.repeat(61) }, catalog), { message: 'status_text is too long (limit: 60 characters)' });
});
