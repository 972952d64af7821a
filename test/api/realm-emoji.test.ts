import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { setRealmProperties } from '../helpers/realm.js';
import { makeChannel } from './drafts-helpers.js';
import { animation, corruptPng, firstPixel, imageInfo, solidPng } from '../helpers/images.js';
import { testMetadata } from '../helpers/platform.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';
import { readdir } from 'node:fs/promises';

// The smallest valid PNG (1x1, transparent).
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082', 'hex');

interface Part { field: string; filename: string; type: string; data: Buffer }
const png = (field = 'f1'): Part => ({ field, filename: 'img.png', type: 'image/png', data: PNG });

async function upload(s: TestServer, as: TestUser, name: string, files: Part[] = [png()]) {
  const boundary = `----emoji${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const f of files) {
    // An empty type leaves the part without a Content-Type header.
    const type = f.type ? `Content-Type: ${f.type}\r\n` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${f.filename}"\r\n${type}\r\n`));
    chunks.push(f.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const r = await s.fastify.inject({
    method: 'POST',
    url: `/api/v1/realm/emoji/${name}`,
    headers: { authorization: as.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: Buffer.concat(chunks),
  });
  return { status: r.statusCode, body: r.json() };
}

async function emojiNamed(s: TestServer, as: TestUser, name: string): Promise<Record<string, any>> {
  const list = (await s.api('GET', '/realm/emoji', as)).body.emoji as Record<string, Record<string, any>>;
  const found = Object.values(list).filter((e) => e.name === name && !e.deactivated);
  if (found.length !== 1) throw new Error(`expected one active emoji ${name}, got ${found.length}`);
  return found[0]!;
}

async function withTempDir(t: Test): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'emoji-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  return dataDir;
}

t.test('upload, list, serve and deactivate custom emoji', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');

  t.same((await s.api('GET', '/realm/emoji', alice)).body, { result: 'success', msg: '', emoji: {} });
  const added = await upload(s, alice, 'green_tick');
  t.same(added, { status: 200, body: { result: 'success', msg: '' } });
  const tick = await emojiNamed(s, bob, 'green_tick');
  t.same(tick, {
    id: tick.id, name: 'green_tick', source_url: `/user_avatars/1/emoji/images/${tick.id}.png`,
    still_url: null, deactivated: false, author_id: alice.id,
  });
  t.match(tick.id, /^\d+$/, 'ids are strings of digits');

  const image = await s.fastify.inject({ method: 'GET', url: tick.source_url });
  t.equal(image.statusCode, 200, 'the image is served without authentication');
  t.equal(image.headers['content-type'], 'image/png');
  t.same(image.rawPayload, PNG);
  t.equal((await s.fastify.inject({ method: 'GET', url: '/user_avatars/1/emoji/images/999999.png' })).statusCode, 404);

  // Spaces become underscores.
  t.equal((await upload(s, bob, 'thumbs%20up%20bob')).status, 200);
  t.equal((await emojiNamed(s, bob, 'thumbs_up_bob')).author_id, bob.id);

  const error = async (as: TestUser, name: string, msg: string, files?: Part[]) => {
    const r = await upload(s, as, name, files);
    t.same(r, { status: 400, body: { result: 'error', code: 'BAD_REQUEST', msg } }, `${name}: ${msg}`);
  };
  await error(alice, 'my_EMoji', 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
  await error(alice, 'my_em*oji', 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
  await error(alice, 'my_emoji_', 'Emoji names must end with either a letter or digit.');
  await error(alice, '%20', 'Emoji name is missing');
  await error(bob, 'green_tick', 'A custom emoji with this name already exists.');
  await error(alice, 'two', 'You must upload exactly one file.', [png('f1'), png('f2')]);
  await error(alice, 'none', 'You must upload exactly one file.', []);
  await error(alice, 'laughing', 'Only administrators can override default emoji.');
  await error(alice, 'up', 'Only administrators can override default emoji.'); // a name of the real server's table only
  await error(alice, 'text', 'Invalid image format', [{ field: 'f1', filename: 'a.txt', type: 'text/plain', data: Buffer.from('hi') }]);
  process.env.MAX_EMOJI_FILE_SIZE_MIB = '0';
  try {
    await error(alice, 'big', 'Uploaded file is larger than the allowed limit of 0 MiB');
  } finally {
    delete process.env.MAX_EMOJI_FILE_SIZE_MIB;
  }
  t.equal((await upload(s, admin, 'smile')).status, 200, 'administrators may override a built-in emoji');

  // Deactivation: authors their own, administrators any.
  const missing = await s.api('DELETE', '/realm/emoji/no_such_emoji', alice);
  t.same(missing, { status: 404, body: { result: 'error', code: 'BAD_REQUEST', msg: "Emoji 'no_such_emoji' does not exist" }, headers: missing.headers });
  const notAuthor = await s.api('DELETE', '/realm/emoji/green_tick', bob);
  t.equal(notAuthor.body.msg, 'Must be an organization administrator or emoji author');
  t.equal((await s.api('DELETE', '/realm/emoji/green_tick', alice)).status, 200);
  t.equal((await s.api('DELETE', '/realm/emoji/thumbs_up_bob', admin)).status, 200);
  const list = (await s.api('GET', '/realm/emoji', alice)).body.emoji;
  t.equal(list[tick.id].deactivated, true, 'deactivated, not removed');
  t.equal((await s.api('DELETE', '/realm/emoji/green_tick', alice)).status, 404, 'a deactivated emoji cannot be deactivated again');
  t.equal((await s.fastify.inject({ method: 'GET', url: tick.source_url })).statusCode, 200, 'old messages still show the image');

  // The name is free again.
  t.equal((await upload(s, bob, 'green_tick')).status, 200);
  const again = await emojiNamed(s, bob, 'green_tick');
  t.not(again.id, tick.id);
  t.equal(Object.values((await s.api('GET', '/realm/emoji', bob)).body.emoji).filter((e: any) => e.name === 'green_tick').length, 2);
});

t.test('an emoji uploaded without a Content-Type is taken for what its bytes are', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const untyped = await upload(s, s.owner, 'untyped', [{ field: 'f1', filename: 'img', type: '', data: PNG }]);
  t.equal(untyped.status, 200, JSON.stringify(untyped.body));
  const emoji = await emojiNamed(s, s.owner, 'untyped');
  t.match(emoji.source_url, /\.png$/);
  const image = await s.fastify.inject({ method: 'GET', url: emoji.source_url });
  t.equal(image.headers['content-type'], 'image/png');
  const generic = await upload(s, s.owner, 'generic', [{ field: 'f1', filename: 'img', type: 'application/octet-stream', data: PNG }]);
  t.equal(generic.status, 200, 'application/octet-stream says nothing either');
  const text = await upload(s, s.owner, 'text', [{ field: 'f1', filename: 'a', type: '', data: Buffer.from('not an image') }]);
  t.equal(text.status, 400);
  t.equal(text.body.msg, 'Invalid image format');
});

t.test('who may add custom emoji follows add_custom_emoji_policy', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const member = await s.user(Role.MEMBER, 'Member');
  const moderator = await s.user(Role.MODERATOR, 'Moderator');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const guest = await s.user(Role.GUEST, 'Guest');

  const state = await s.api('POST', '/register', member, { fetch_event_types: ['realm'] });
  t.equal(state.body.realm_add_custom_emoji_policy, 1, 'members by default');
  t.equal((await upload(s, guest, 'guest_emoji')).body.msg, 'Not allowed for guest users');
  t.equal((await upload(s, member, 'member_emoji')).status, 200);

  await setRealmProperties(s, { add_custom_emoji_policy: 2 });
  t.equal((await upload(s, moderator, 'mod_emoji')).body.msg, 'Insufficient permission');
  t.equal((await upload(s, admin, 'admin_emoji')).status, 200);

  await setRealmProperties(s, { add_custom_emoji_policy: 4 });
  t.equal((await upload(s, member, 'member_emoji_2')).body.msg, 'Insufficient permission');
  t.equal((await upload(s, moderator, 'mod_emoji')).status, 200);

  await setRealmProperties(s, { add_custom_emoji_policy: 3, waiting_period_threshold: 100000 });
  t.equal((await upload(s, member, 'member_emoji_3')).body.msg, 'Insufficient permission', 'not yet a full member');
  await setRealmProperties(s, { waiting_period_threshold: 0 });
  t.equal((await upload(s, member, 'member_emoji_3')).status, 200);
});

t.test('reactions with custom emoji', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await makeChannel(s, 'general', { subscribers: [alice.id, bob.id] });
  const send = async () => (await s.api('POST', '/messages', alice, { type: 'stream', to: 'general', topic: 'emoji', content: 'hi' })).body.id as number;
  const first = await send();
  const second = await send();
  t.equal((await upload(s, alice, 'party_parrot')).status, 200);
  const parrot = await emojiNamed(s, alice, 'party_parrot');
  const reactions = async (id: number) => (await s.api('GET', `/messages/${id}`, alice)).body.message.reactions as Array<Record<string, unknown>>;
  const react = (as: TestUser, id: number, params: Record<string, unknown>) => s.api('POST', `/messages/${id}/reactions`, as, params);

  t.equal((await react(alice, first, { emoji_name: 'party_parrot' })).status, 200, 'a name alone finds the custom emoji');
  t.match(await reactions(first), [{ emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji', user_id: alice.id }]);

  t.equal((await react(bob, second, { emoji_name: 'party_parrot', emoji_code: '999999', reaction_type: 'realm_emoji' })).body.msg, 'Invalid custom emoji.');
  t.equal((await react(bob, second, { emoji_name: 'parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' })).body.msg, 'Invalid custom emoji name.');
  t.equal((await react(bob, second, { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' })).status, 200);
  t.equal((await s.api('DELETE', `/messages/${second}/reactions`, bob, { emoji_name: 'party_parrot' })).status, 200, 'removal by name alone');
  t.same(await reactions(second), []);

  t.equal((await s.api('DELETE', '/realm/emoji/party_parrot', alice)).status, 200);
  t.equal((await react(bob, second, { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' })).body.msg,
    'This custom emoji has been deactivated.', 'no new reaction with a deactivated emoji');
  t.equal((await react(bob, second, { emoji_name: 'party_parrot' })).body.msg, "Emoji 'party_parrot' does not exist");
  t.equal((await react(bob, first, { emoji_name: 'party_parrot', emoji_code: parrot.id, reaction_type: 'realm_emoji' })).status, 200,
    'voting for a reaction already on the message is still allowed');
  t.equal((await reactions(first)).length, 2);
  t.equal((await s.api('DELETE', `/messages/${first}/reactions`, bob, { emoji_code: parrot.id, reaction_type: 'realm_emoji' })).status, 200);
  t.equal((await reactions(first)).length, 1);
});

t.test('custom emoji in Markdown', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const render = async (content: string) => (await s.api('POST', '/messages/render', alice, { content })).body.rendered as string;

  t.equal(await render(':green_tick:'), '<p>:green_tick:</p>', 'not an emoji yet');
  t.equal((await upload(s, alice, 'green_tick')).status, 200);
  const tick = await emojiNamed(s, alice, 'green_tick');
  t.equal(await render('done :green_tick:'), `<p>done <img alt=":green_tick:" class="emoji" src="/user_avatars/1/emoji/images/${tick.id}.png" title="green tick"></p>`);

  t.equal((await upload(s, admin, 'smile')).status, 200);
  const smile = await emojiNamed(s, alice, 'smile');
  t.equal(await render(':smile:'), `<p><img alt=":smile:" class="emoji" src="/user_avatars/1/emoji/images/${smile.id}.png" title="smile"></p>`,
    'a custom emoji wins over the built-in one of the same name');

  t.equal((await s.api('DELETE', '/realm/emoji/green_tick', alice)).status, 200);
  t.equal(await render(':green_tick:'), '<p>:green_tick:</p>', 'a deactivated emoji no longer renders');
});

t.test('realm_emoji events keep /register state current', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const expectUpdate = (names: string[]) => (events: Array<Record<string, any>>) => {
    t.equal(events.length, 1);
    t.equal(events[0]?.type, 'realm_emoji');
    t.equal(events[0]?.op, 'update');
    t.same(Object.values(events[0]?.realm_emoji ?? {}).filter((e: any) => !e.deactivated).map((e: any) => e.name).sort(), names);
  };
  for (const register of [{ fetch_event_types: ['realm_emoji'] }, {}]) {
    await verifyAction(t, s, bob, async () => t.equal((await upload(s, alice, 'first')).status, 200), { register, expect: expectUpdate(['first']) });
    await verifyAction(t, s, bob, async () => t.equal((await upload(s, alice, 'second')).status, 200), { register, expect: expectUpdate(['first', 'second']) });
    await verifyAction(t, s, bob, async () => t.equal((await s.api('DELETE', '/realm/emoji/first', alice)).status, 200), { register, expect: expectUpdate(['second']) });
    await verifyAction(t, s, bob, async () => t.equal((await s.api('DELETE', '/realm/emoji/second', alice)).status, 200), { register, expect: expectUpdate([]) });
  }
  const state = await s.api('POST', '/register', bob, { fetch_event_types: ['realm_emoji'] });
  t.equal(Object.keys(state.body.realm_emoji).length, 4, 'deactivated emoji stay in the state');
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name)).sort();
}

t.test('images are scaled down to fit 64x64; an animated one keeps its frames and gets a still image', async (t) => {
  const dataDir = await withTempDir(t);
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const get = (url: string) => s.fastify.inject({ method: 'GET', url });

  const gif = await animation(100);
  t.equal((await upload(s, alice, 'dancing_bird', [{ field: 'f1', filename: 'bird.gif', type: 'image/gif', data: gif }])).status, 200);
  const bird = await emojiNamed(s, alice, 'dancing_bird');
  t.equal(bird.source_url, `/user_avatars/1/emoji/images/${bird.id}.gif`);
  t.equal(bird.still_url, `/user_avatars/1/emoji/images/still/${bird.id}.png`, 'the real server\'s still image path');
  const animated = await get(bird.source_url);
  t.equal(animated.statusCode, 200);
  t.equal(animated.headers['content-type'], 'image/gif');
  t.same(await imageInfo(animated.rawPayload), { format: 'gif', width: 64, height: 64, frames: 2 }, 'scaled down, both frames kept');
  const still = await get(bird.still_url);
  t.equal(still.statusCode, 200, 'the still image is served without authentication, like source_url');
  t.equal(still.headers['content-type'], 'image/png');
  t.equal(still.headers['x-content-type-options'], 'nosniff');
  t.same(await imageInfo(still.rawPayload), { format: 'png', width: 64, height: 64, frames: 1 });
  t.same(await firstPixel(still.rawPayload), [255, 0, 0], 'the first frame');
  const original = await get(`${bird.source_url}.original`);
  t.equal(original.headers['content-type'], 'image/gif');
  t.equal(Buffer.compare(original.rawPayload, gif), 0, 'the upload is kept as it came, as the real server keeps <file>.original');

  t.equal((await upload(s, alice, 'big_square', [{ field: 'f1', filename: 'sq.png', type: 'image/png', data: await solidPng(200, { r: 0, g: 255, b: 0 }) }])).status, 200);
  const square = await emojiNamed(s, alice, 'big_square');
  t.equal(square.still_url, null, 'not animated: no still image');
  const resized = await get(square.source_url);
  t.equal(resized.headers['content-type'], 'image/png');
  t.same(await imageInfo(resized.rawPayload), { format: 'png', width: 64, height: 64, frames: 1 });
  t.equal((await get(`/user_avatars/1/emoji/images/still/${square.id}.png`)).statusCode, 404, 'no still image of a still image');

  const small = await solidPng(16, { r: 0, g: 0, b: 255 });
  t.equal((await upload(s, alice, 'blue_tile', [{ field: 'f1', filename: 's.png', type: 'image/png', data: small }])).status, 200);
  const kept = await get((await emojiNamed(s, alice, 'blue_tile')).source_url);
  t.equal(Buffer.compare(kept.rawPayload, small), 0, 'an image that already fits is stored byte for byte');

  for (const url of ['/user_avatars/1/emoji/images/still/999999.png', `/user_avatars/2/emoji/images/still/${bird.id}.png`,
    `/user_avatars/1/emoji/images/still/${bird.id}.gif`, '/user_avatars/1/emoji/images/still/99999999999999999999.png',
    `/user_avatars/1/emoji/images/still/..%2F${bird.id}.png`]) {
    const r = await get(url);
    t.same({ status: r.statusCode, code: r.json().code }, { status: 404, code: 'BAD_REQUEST' }, url);
  }

  // Bytes that are not an image: a 400, nothing recorded, nothing left in storage.
  const head = (await s.platform.store.head()).position;
  const files = await filesUnder(dataDir);
  for (const [type, data] of [['image/png', Buffer.from('this is not a PNG at all')], ['image/gif', Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(40, 7)])], ['image/png', await corruptPng()]] as const) {
    const r = await upload(s, alice, 'garbage', [{ field: 'f1', filename: 'g.png', type, data }]);
    t.equal(r.status, 400, type);
    t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg: /^(Could not decode image; did you upload an image file\?|Image is corrupted or truncated)$/ });
  }
  t.equal((await s.platform.store.head()).position, head, 'no event appended');
  t.same(await filesUnder(dataDir), files, 'no bytes left behind');

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'the read tables rebuild from the log');
  t.equal((await emojiNamed(s, alice, 'dancing_bird')).still_url, bird.still_url);
});

t.test('still_url in /register and in realm_emoji events; emoji recorded before still images have none', async (t) => {
  const s = await startTestServer(t, { dataDir: await withTempDir(t) });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');

  // A RealmEmojiAdded of schema version 1, as written before still images existed.
  const realmId = 1;
  await s.platform.store.append([{
    streamId: `realm-emoji-${realmId}`, expectedVersion: -1,
    events: [{ type: 'RealmEmojiAdded', schemaVersion: 1, data: { realm_id: realmId, emoji_id: 900, name: 'old_parrot', author_id: alice.id, file_name: '900.gif', path_id: `${realmId}/ab/cdefghijklmnopqrstuvwxyz/emoji-900`, content_type: 'image/gif' } }],
  }], testMetadata(alice.id));
  t.ok(await s.platform.waitForProjections((await s.platform.store.head()).position, 30_000));
  t.equal((await emojiNamed(s, bob, 'old_parrot')).still_url, null, 'an old event gives still_url null');

  const gif = await animation(100);
  const events = await verifyAction(t, s, bob, async () => {
    t.equal((await upload(s, alice, 'dancing_bird', [{ field: 'f1', filename: 'bird.gif', type: 'image/gif', data: gif }])).status, 200);
  }, { register: { fetch_event_types: ['realm_emoji'] } });
  const sent = Object.values(events[0]?.realm_emoji ?? {}) as Array<Record<string, any>>;
  const bird = await emojiNamed(s, bob, 'dancing_bird');
  t.same(sent.map((e) => [e.name, e.still_url]).sort(), [['dancing_bird', `/user_avatars/1/emoji/images/still/${bird.id}.png`], ['old_parrot', null]],
    'the event carries still_url, null for the old emoji');
  const state = await s.api('POST', '/register', bob, { fetch_event_types: ['realm_emoji'] });
  t.equal(state.body.realm_emoji[bird.id].still_url, bird.still_url, '/register carries still_url');
  t.equal(state.body.realm_emoji['900'].still_url, null);

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild, old event included');
});
