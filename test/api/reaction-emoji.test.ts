import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestUser } from '../helpers/server.js';
import { testMetadata } from '../helpers/platform.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

// Reactions against the real server's emoji catalogue: the (emoji_name, emoji_code, reaction_type) triples real
// clients send, the real server's checks in its order and wording, and reactions stored before the catalogue.

type Params = Record<string, unknown>;

async function setup(t: Test) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'reaction-emoji-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'emoji' }] });
  const send = async () => (await s.api('POST', '/messages', alice, { type: 'stream', to: 'emoji', topic: 't', content: 'hi' })).body.id as number;
  const react = (u: TestUser, id: number, p: Params) => s.api('POST', `/messages/${id}/reactions`, u, p);
  const unreact = (u: TestUser, id: number, p: Params) => s.api('DELETE', `/messages/${id}/reactions`, u, p);
  const reactions = async (id: number) =>
    ((await s.api('GET', `/messages/${id}`, alice)).body.message.reactions as Array<Record<string, unknown>>).map((r) => [r.emoji_name, r.emoji_code, r.reaction_type, r.user_id]);
  return { s, alice, bob, send, react, unreact, reactions };
}

const err = (msg: string, code = 'BAD_REQUEST') => ({ status: 400, body: { result: 'error', msg, code } });

t.test('adding: real clients’ triples, names alone, and the real server’s errors', async (t) => {
  const { alice, bob, send, react, reactions } = await setup(t);
  const m = await send();
  // The web app and the mobile apps send all three, from server_emoji_data_url's names.
  t.equal((await react(alice, m, { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'unicode_emoji' })).status, 200);
  t.equal((await react(alice, m, { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' })).status, 200, 'an alias');
  t.equal((await react(alice, m, { emoji_name: 'up' })).status, 200, 'a name alone');
  t.equal((await react(alice, m, { emoji_name: 'family_man_girl_girl', emoji_code: '1f468-200d-1f467-200d-1f467', reaction_type: 'unicode_emoji' })).status, 200);
  t.equal((await react(alice, m, { emoji_name: 'zulip' })).status, 200, 'Zulip’s own emoji');
  t.same(await reactions(m), [
    ['smile', '1f642', 'unicode_emoji', alice.id],
    ['+1', '1f44d', 'unicode_emoji', alice.id],
    ['up', '2b06', 'unicode_emoji', alice.id],
    ['family_man_girl_girl', '1f468-200d-1f467-200d-1f467', 'unicode_emoji', alice.id],
    ['zulip', 'zulip', 'zulip_extra_emoji', alice.id],
  ]);

  // Errors on a message nobody reacted to: with a reaction of that code on the message, it would be a vote.
  const fresh = await send();
  t.match(await react(bob, fresh, { emoji_name: 'smile', emoji_code: '1f604', reaction_type: 'unicode_emoji' }), err('Invalid emoji name.'), 'smile is not U+1F604');
  t.match(await react(bob, fresh, { emoji_name: 'thumbs_up', emoji_code: '1f44d-1f3fb', reaction_type: 'unicode_emoji' }), err('Invalid emoji code'), 'skin tones are not codes');
  t.match(await react(bob, fresh, { emoji_name: 'smile', emoji_code: '1F642', reaction_type: 'unicode_emoji' }), err('Invalid emoji code'), 'codes are lowercase');
  t.match(await react(bob, fresh, { emoji_name: 'skin-tone-2' }), err("Emoji 'skin-tone-2' does not exist"));
  t.match(await react(bob, fresh, { emoji_name: 'man-girl-girl' }), err("Emoji 'man-girl-girl' does not exist"));
  t.match(await react(bob, fresh, { emoji_name: 'smile', emoji_code: '1f642', reaction_type: 'bogus' }), err('Invalid emoji type.'));
  t.match(await react(bob, fresh, { emoji_name: 'octopus', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }), err('Invalid emoji name.'));
  t.match(await react(bob, fresh, { emoji_name: 'zulip', emoji_code: '1f419', reaction_type: 'zulip_extra_emoji' }), err('Invalid emoji code'));
  t.match(await react(bob, fresh, { emoji_code: '1f642', reaction_type: 'unicode_emoji' }), { status: 400, body: { result: 'error', msg: "Missing 'emoji_name' argument", code: 'REQUEST_VARIABLE_MISSING' } }, 'emoji_name is required');

  // The duplicate check comes before any other: the user's own reaction with that code and type.
  t.match(await react(alice, m, { emoji_name: 'not_a_name', emoji_code: '1f642', reaction_type: 'unicode_emoji' }), err('Reaction already exists.', 'REACTION_ALREADY_EXISTS'));
  // A vote for someone else's reaction takes that reaction's name, unchecked.
  t.equal((await react(bob, m, { emoji_name: 'whatever', emoji_code: '1f642', reaction_type: 'unicode_emoji' })).status, 200);
  t.same((await reactions(m)).filter((r) => r[3] === bob.id), [['smile', '1f642', 'unicode_emoji', bob.id]]);
});

t.test('removing: by code, by name, by both; the user’s own reaction whatever its code', async (t) => {
  const { alice, bob, send, react, unreact, reactions } = await setup(t);
  const m = await send();
  for (const name of ['smile', 'octopus', 'heart']) t.equal((await react(bob, m, { emoji_name: name })).status, 200);
  t.equal((await unreact(bob, m, { emoji_code: '1f642', reaction_type: 'unicode_emoji' })).status, 200, 'by code and type');
  t.equal((await unreact(bob, m, { emoji_code: '1f419' })).status, 200, 'by code: unicode_emoji when no type is given');
  t.equal((await unreact(bob, m, { emoji_name: 'love' })).status, 200, 'by name: an alias of heart');
  t.same(await reactions(m), []);
  t.match(await unreact(bob, m, { emoji_name: 'smile' }), err("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST'));
  t.match(await unreact(bob, m, { emoji_code: '1f3fb', reaction_type: 'unicode_emoji' }), err('Invalid emoji code'));
  t.match(await unreact(bob, m, { emoji_name: 'skin-tone-2' }), err("Emoji 'skin-tone-2' does not exist"));
  t.match(await unreact(bob, m, {}), err('At least one of the following arguments must be present: emoji_name, emoji_code'));
  t.match(await unreact(alice, m, { emoji_code: '1f642', reaction_type: 'unicode_emoji' }), err("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST'));
});

t.test('reactions stored before the catalogue keep working', async (t) => {
  const { s, alice, bob, send, react, unreact, reactions } = await setup(t);
  const m = await send();
  // Version 1 events, as written when names came from emojibase: its "smile" was U+1F604, and it named
  // codes the real server has no name for (a clock face).
  const old = (user: TestUser, emoji_name: string, emoji_code: string) =>
    ({ type: 'ReactionAdded', schemaVersion: 1, data: { message_id: m, user_id: user.id, emoji_name, emoji_code, reaction_type: 'unicode_emoji' } });
  await s.platform.store.append([{ streamId: `message-${m}`, expectedVersion: undefined, events: [old(alice, 'smile', '1f604'), old(alice, 'clock12', '1f55b')] }], testMetadata(alice.id));
  t.ok(await s.platform.waitForProjections((await s.platform.store.head()).position, 30_000));
  t.same(await reactions(m), [['big_smile', '1f604', 'unicode_emoji', alice.id], ['clock12', '1f55b', 'unicode_emoji', alice.id]],
    'the old name of U+1F604 reads as the real server’s; a code outside the catalogue keeps its name');

  t.equal((await react(bob, m, { emoji_name: 'clock12', emoji_code: '1f55b', reaction_type: 'unicode_emoji' })).status, 200, 'a vote needs no valid code');
  t.equal((await react(bob, m, { emoji_name: 'big_smile' })).status, 200, 'U+1F604 by its name now is a vote too');
  t.same((await reactions(m)).filter((r) => r[3] === bob.id), [['clock12', '1f55b', 'unicode_emoji', bob.id], ['big_smile', '1f604', 'unicode_emoji', bob.id]]);
  t.equal((await unreact(alice, m, { emoji_code: '1f55b', reaction_type: 'unicode_emoji' })).status, 200, 'its own reaction is removed by its code');

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'the read tables rebuild from the log, old events included');
});
