import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { PNG, sendFiles } from '../helpers/upload.js';

const uploadAvatar = (s: TestServer, as: TestUser, files: Array<{ field: string; data: Buffer }>) => sendFiles(s, as, 'POST', '/users/me/avatar', files);

t.test('avatar upload and removal', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const other = await s.user(Role.MEMBER, 'Other');

  const none = await uploadAvatar(s, member, []);
  t.equal(none.status, 400);
  t.equal(none.body.msg, 'You must upload exactly one avatar.');
  const two = await uploadAvatar(s, member, [{ field: 'a', data: PNG }, { field: 'b', data: PNG }]);
  t.equal(two.body.msg, 'You must upload exactly one avatar.');
  const notImage = await uploadAvatar(s, member, [{ field: 'f', data: Buffer.from('plain text, not an image') }]);
  t.equal(notImage.body.msg, 'Could not decode image; did you upload an image file?');
  const big = Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]);
  const tooLarge = await uploadAvatar(s, member, [{ field: 'f', data: big }]);
  t.equal(tooLarge.status, 400);
  t.equal(tooLarge.body.msg, 'Uploaded file is larger than the allowed limit of 5 MiB');
  t.equal((await s.api('GET', '/users/me', member)).body.avatar_version, 1, 'failed uploads change nothing');

  const ok = await uploadAvatar(s, member, [{ field: 'f', data: PNG }]);
  t.equal(ok.status, 200);
  t.match(ok.body.avatar_url, new RegExp(`^/user_avatars/\\d+/${member.id}\\.png\\?version=2$`));
  const seen = await s.api('GET', `/users/${member.id}`, other);
  t.equal(seen.body.user.avatar_url, ok.body.avatar_url, 'others see the uploaded avatar');
  t.equal(seen.body.user.avatar_version, 2);

  const served = await s.fastify.inject({ method: 'GET', url: ok.body.avatar_url });
  t.equal(served.statusCode, 200, 'the avatar is served at its URL');
  t.equal(served.headers['content-type'], 'image/png');
  t.same(served.rawPayload, PNG);
  const medium = await s.fastify.inject({ method: 'GET', url: ok.body.avatar_url.replace('.png', '-medium.png') });
  t.equal(medium.statusCode, 200);
  t.equal((await s.fastify.inject({ method: 'GET', url: `/user_avatars/1/${other.id}.png` })).statusCode, 404, 'no upload, no file');

  const removed = await s.api('DELETE', '/users/me/avatar', member);
  t.equal(removed.status, 200);
  t.match(removed.body.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=3$/);
  t.equal((await s.fastify.inject({ method: 'GET', url: ok.body.avatar_url })).statusCode, 404, 'the old upload is no longer served');
});

t.test('avatar changes disabled by the organization', async (t) => {
  const { setRealmProperties } = await import('../helpers/realm.js');
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  await setRealmProperties(s, { avatar_changes_disabled: true });
  const refused = await uploadAvatar(s, member, [{ field: 'f', data: PNG }]);
  t.equal(refused.body.msg, 'Avatar changes are disabled in this organization.');
  t.equal((await s.api('DELETE', '/users/me/avatar', member)).body.msg, 'Avatar changes are disabled in this organization.');
  t.equal((await uploadAvatar(s, admin, [{ field: 'f', data: PNG }])).status, 200, 'administrators still may');
});

t.test('avatar events keep registered state equal to a fresh register', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const viewer = await s.user(Role.MEMBER, 'Viewer');
  for (const client_gravatar of [false, true]) {
    const register = { event_types: ['realm_user'], fetch_event_types: ['realm_user'], client_gravatar };
    for (const user of [member, viewer]) {
      const up = await verifyAction(t, s, user, () => uploadAvatar(s, member, [{ field: 'f', data: PNG }]), { register });
      t.match(up, [{ type: 'realm_user', op: 'update', person: { user_id: member.id, avatar_source: 'U', avatar_url: /^\/user_avatars\//, avatar_url_medium: /-medium\.png/ } }]);
      const down = await verifyAction(t, s, user, () => s.api('DELETE', '/users/me/avatar', member), { register });
      t.match(down, [{ type: 'realm_user', op: 'update', person: { user_id: member.id, avatar_source: 'G', avatar_url: /gravatar/ } }]);
    }
  }
});
