import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, Role, testConfig, basicAuth } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { uniqueMarker } from '../helpers/marker-search.js';
import { allProjections } from '../../projections/index.js';
import { replayInto, parseReplayPoint, targetConfig } from '../../src/cli/replay.js';
import { buildServer } from '../../src/build-server.js';
import { SHREDDED } from '../../src/eventstore/crypto/index.js';

// The edit history of a forgotten message: replayed to a moment before its shred, the message is
// still there, but every version reads as shredded, and so does the difference between them: the
// diff never brings back a word of a shredded version.
t.test('replayed before the shred: the history and its diffs read as shredded', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'history-diff-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  await createChannel(s, alice, 'forgotten edits', []);
  const before = uniqueMarker();
  const after = uniqueMarker();
  const m = await sendStream(s, alice, 'forgotten edits', 'topic', `words ${before}`);
  t.equal((await s.api('PATCH', `/messages/${m}`, alice, { content: `words ${after}` })).status, 200);
  const live = (await s.api('GET', `/messages/${m}/history`, alice)).body.message_history;
  t.match(live[1].content_html_diff, after, 'while the message lives, the diff shows its words');

  const head = (await s.platform.store.head()).position;
  t.ok(await s.platform.waitForProjections(head));
  t.equal((await s.api('DELETE', `/messages/${m}`, alice, { purge: true })).status, 400, 'members may not purge');
  t.equal((await s.api('DELETE', `/messages/${m}`, s.owner, { purge: true })).status, 200, 'an administrator shreds at once');

  const target = targetConfig(await testConfig(), path.join(dir, 'past'));
  await replayInto(s.platform.db, target, allProjections, parseReplayPoint(String(head)), () => {});
  const past = await buildServer({ ...target, rateLimitPerMinute: 0 }, { projections: allProjections });
  t.teardown(() => past.close());
  const row = await past.platform.db.selectFrom('users').select(['delivery_email', 'api_key']).where('id', '=', alice.id).executeTakeFirstOrThrow();
  const got = await past.fastify.inject({
    method: 'GET',
    url: `/api/v1/messages/${m}/history`,
    headers: { authorization: basicAuth(row.delivery_email, row.api_key) },
  });
  t.equal(got.statusCode, 200, 'the message existed at that moment');
  const history = got.json().message_history as Array<Record<string, unknown>>;
  t.equal(history.length, 2);
  t.match(history[0], { content: SHREDDED, rendered_content: SHREDDED });
  t.match(history[1], { content: SHREDDED, rendered_content: SHREDDED, prev_content: SHREDDED, prev_rendered_content: SHREDDED });
  t.equal(history[1]!.content_html_diff, `<div>${SHREDDED}</div>`, 'the diff of forgotten versions is the marker alone');
  t.notMatch(got.body, before);
  t.notMatch(got.body, after);
});
