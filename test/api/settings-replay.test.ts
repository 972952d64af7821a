import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

t.test('settings, defaults, alert words and typing replay to identical read tables', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  await s.api('PATCH', '/settings', alice, { color_scheme: 2, timezone: 'Asia/Kolkata', email_address_visibility: 3, full_name: 'Alice A' });
  await s.api('PATCH', '/settings', alice, { color_scheme: 3, enter_sends: true });
  await s.api('PATCH', '/realm/user_settings_defaults', admin, { emojiset: 'text', web_home_view: 'all_messages' });
  const bob = await s.user(Role.MEMBER, 'Bob');
  await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['One', 'two', 'three'] });
  await s.api('DELETE', '/users/me/alert_words', alice, { alert_words: ['two'] });
  await s.api('POST', '/users/me/alert_words', bob, { alert_words: ['two'] });
  await s.api('POST', '/typing', alice, { op: 'start', to: [bob.id] });

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  t.equal(before.find((x) => x.table === 'alert_words')!.rows, 3);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild');
  t.same((await s.api('GET', '/users/me/alert_words', alice)).body.alert_words, ['One', 'three']);
  const bobRow = await s.platform.db.selectFrom('users').selectAll().where('id', '=', bob.id).executeTakeFirstOrThrow();
  t.match(bobRow.settings, { emojiset: 'text', web_home_view: 'all_messages' }, 'Bob started from the defaults of his day');
});
