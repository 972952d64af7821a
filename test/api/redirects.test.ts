import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { PNG, sendFiles } from '../helpers/upload.js';

const get = async (s: TestServer, url: string, as: TestUser | null) => {
  const r = await s.fastify.inject({ method: 'GET', url, headers: as ? { authorization: as.auth } : {} });
  let body: any;
  try {
    body = r.json();
  } catch {
    body = r.body;
  }
  return { status: r.statusCode, location: r.headers.location as string | undefined, body };
};
const gravatar = (text: string) => `https://secure.gravatar.com/avatar/${createHash('md5').update(text.toLowerCase()).digest('hex')}?d=identicon&version=1`;

t.test('GET /avatar/{email_or_id}: a redirect to the avatar, by id or by an email the viewer may see', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  t.equal((await sendFiles(s, alice, 'POST', '/users/me/avatar', [{ field: 'file', data: PNG }])).status, 200);
  const me = (await s.api('GET', `/users/${alice.id}`, bob)).body.user;

  let r = await get(s, `/avatar/${alice.id}`, bob);
  t.equal(r.status, 302);
  t.equal(r.location, me.avatar_url, 'by id: the avatar_url clients are given');
  r = await get(s, `/avatar/${alice.id}/medium`, bob);
  t.equal(r.location, me.avatar_url.replace('.png?', '-medium.png?'), 'medium size');
  t.equal((await get(s, `/avatar/${alice.id}?s=50`, bob)).location, `${me.avatar_url}&s=50`, 'the query string is passed on');
  t.equal((await get(s, `/avatar/${alice.email}`, bob)).location, me.avatar_url, 'by a visible email');

  // Alice hides her address from everyone but administrators.
  t.equal((await s.api('PATCH', '/settings', alice, { email_address_visibility: 3 })).status, 200);
  t.equal((await get(s, `/avatar/${alice.email}`, bob)).location, gravatar(alice.email), 'a hidden address names nobody: the Gravatar of the text');
  t.equal((await get(s, `/avatar/${alice.email}`, admin)).location, me.avatar_url, 'an administrator may use it');
  const shown: string = (await s.api('GET', `/users/${alice.id}`, bob)).body.user.email;
  t.not(shown, alice.email);
  t.equal((await get(s, `/avatar/${shown}`, bob)).location, me.avatar_url, 'the address clients are given works');

  t.equal((await get(s, `/avatar/${bob.id}`, alice)).location, gravatar(bob.email), "a Gravatar user's avatar is the Gravatar");
  t.equal((await get(s, '/avatar/nobody@example.com/medium', alice)).location, `${gravatar('nobody@example.com')}&s=500`, 'unknown email');
  t.equal((await get(s, '/avatar/99999999', alice)).location, gravatar('99999999'), 'unknown id');
  t.equal((await get(s, '/avatar/99999999999999999999', alice)).status, 302, 'an id past any integer is just unknown');
  t.equal((await get(s, `/avatar/${alice.id}`, null)).status, 401, 'signed-in users only');
});

t.test('GET /thumbnail: no thumbnailing service, so the image itself, after the checks', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const up = await sendFiles(s, alice, 'POST', '/user_uploads', [{ field: 'file', data: PNG }]);
  t.equal(up.status, 200);
  const uri: string = up.body.uri ?? up.body.url;
  const path = uri.replace(/^https?:\/\/[^/]+/, '');

  let r = await get(s, `/thumbnail?url=${encodeURIComponent(path.slice(1))}&size=thumbnail`, alice);
  t.equal(r.status, 302);
  t.equal(r.location, path, 'the owner is sent to the file');
  r = await get(s, `/thumbnail?url=${encodeURIComponent(path.slice(1))}&size=full`, bob);
  t.equal(r.status, 403, 'someone who may not download it');
  t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'You are not authorized to view this file.' });
  r = await get(s, `/thumbnail?url=${encodeURIComponent(path)}&size=huge`, alice);
  t.same([r.status, r.body.msg], [403, 'Invalid size.']);
  r = await get(s, `/thumbnail?url=${encodeURIComponent('https://example.com/a.png')}&size=full`, bob);
  t.same([r.status, r.location], [302, 'https://example.com/a.png'], 'an outside image: itself');
  r = await get(s, `/thumbnail?url=${encodeURIComponent('javascript:alert(1)')}&size=full`, bob);
  t.same([r.status, r.body.msg], [400, 'Invalid URL']);
  r = await get(s, '/thumbnail?size=full', bob);
  t.same([r.status, r.body.code], [400, 'REQUEST_VARIABLE_MISSING']);
  t.equal((await get(s, `/thumbnail?url=x&size=full`, null)).status, 401);
});
