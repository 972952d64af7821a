import t from 'tap';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { serverWithDataDir, hasDataKey } from '../helpers/forgetting-server.js';
import { Role } from '../helpers/server.js';
import { filesContaining, uniqueMarker } from '../helpers/marker-search.js';
import { PNG, sendFiles } from '../helpers/upload.js';
import { avatarPathId } from '../../src/services/avatars.js';
import { uploadKeyId } from '../../src/services/upload-crypto.js';
import { writeZuliprc } from '../../src/services/bootstrap.js';

const marker = uniqueMarker;

t.test('an erased account cannot be renamed, reactivated or given new personal data', async (t) => {
  const { s } = await serverWithDataDir(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const field = (await s.api('POST', '/realm/profile_fields', s.owner, { name: 'Team', field_type: 1 })).body.id as number;
  t.equal((await s.api('POST', `/users/${alice.id}/erase`, s.owner, {})).status, 200);
  const headBefore = (await s.platform.store.head()).position;
  const rename = await s.api('PATCH', `/users/${alice.id}`, admin, { full_name: 'Alice again' });
  t.same([rename.status, rename.body.code, rename.body.msg], [400, 'BAD_REQUEST', 'This user has been erased.']);
  const reactivate = await s.api('POST', `/users/${alice.id}/reactivate`, admin, {});
  t.same([reactivate.status, reactivate.body.msg], [400, 'This user has been erased.']);
  const profile = await s.api('PATCH', `/users/${alice.id}`, admin, { profile_data: [{ id: field, value: 'x' }] });
  t.equal(profile.status, 400, 'no profile values either');
  t.equal((await s.platform.store.head()).position, headBefore, 'nothing was appended');
  const shown = (await s.api('GET', `/users/${alice.id}`, admin)).body.user;
  t.same([shown.full_name, shown.is_active], [`Deleted User ${alice.id}`, false]);
  const bob = await s.user(Role.MEMBER, 'Bob');
  t.equal((await s.api('PATCH', `/users/${bob.id}`, admin, { full_name: 'Robert' })).status, 200, 'others are renamed as before');
});

t.test('avatar images are sealed at rest and destroyed with the person', async (t) => {
  const { s, dataDir } = await serverWithDataDir(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const text = marker();
  // A PNG with the marker after its end: still an image, and its bytes are searchable.
  const image = Buffer.concat([PNG, Buffer.from(text)]);
  const up = await sendFiles(s, alice, 'POST', '/users/me/avatar', [{ field: 'f', data: image }]);
  t.equal(up.status, 200, JSON.stringify(up.body));
  const pathId = avatarPathId(1, alice.id, 2);
  t.same(filesContaining(path.join(dataDir, 'uploads'), text), [], 'the image is encrypted at rest');
  t.ok(await hasDataKey(s, uploadKeyId(pathId)), 'under a key of its own');
  const served = await s.fastify.inject({ method: 'GET', url: up.body.avatar_url });
  t.equal(served.statusCode, 200);
  t.ok(served.rawPayload.equals(image), 'and decrypted when served');

  const erased = await s.api('POST', `/users/${alice.id}/erase`, s.owner, {});
  t.equal(erased.status, 200);
  t.notOk(await hasDataKey(s, uploadKeyId(pathId)), 'its key is destroyed');
  t.notOk(existsSync(path.join(dataDir, 'uploads', pathId)), 'its bytes are removed');
  const audit = await s.api('GET', '/audit/events', s.owner, { user_id: alice.id });
  t.ok(audit.body.events.at(-1).data.upload_key_ids.includes(uploadKeyId(pathId)), 'UserErased names the avatar key, so every reader evicts it');
});

t.test('erasure removes the zuliprc files that hold the person\'s address and API key', async (t) => {
  const { s, dataDir } = await serverWithDataDir(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const theirs = writeZuliprc(dataDir, `zuliprc-${alice.email}`, alice.email, 'secretkey', 'http://localhost');
  const named = writeZuliprc(dataDir, 'zuliprc-custom', alice.email.toUpperCase(), 'secretkey', 'http://localhost');
  const other = writeZuliprc(dataDir, `zuliprc-${bob.email}`, bob.email, 'otherkey', 'http://localhost');
  t.equal((await s.api('POST', `/users/${alice.id}/erase`, s.owner, {})).status, 200);
  t.notOk(existsSync(theirs), 'zuliprc-<email> is removed');
  t.notOk(existsSync(named), 'a file named otherwise but holding their address too');
  t.ok(existsSync(other), "another person's stays");
});
