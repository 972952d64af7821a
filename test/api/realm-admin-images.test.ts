import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { sendFiles } from '../helpers/upload.js';
import { solidPng, imageInfo } from '../helpers/images.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

const register = { event_types: ['realm'], fetch_event_types: ['realm'] };

t.test('organization icon: upload, serve, redirect, remove', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const before = (await s.api('POST', '/register', member, register)).body;
  t.equal(before.realm_icon_source, 'G');

  let answer: any;
  const uploaded = await verifyAction(t, s, member, async () => {
    answer = await sendFiles(s, admin, 'POST', '/realm/icon', [{ field: 'file', data: await solidPng(300, { r: 200, g: 0, b: 0 }) }]);
  }, { register });
  t.equal(answer.status, 200);
  t.match(answer.body.icon_url, /\/user_avatars\/1\/realm\/icon\.png\?version=1$/);
  t.same(uploaded.map(({ id: _id, ...e }) => e), [
    { type: 'realm', op: 'update_dict', property: 'icon', data: { icon_url: answer.body.icon_url, icon_source: 'U' } },
  ]);
  const state = (await s.api('POST', '/register', member, register)).body;
  t.match(state, { realm_icon_url: answer.body.icon_url, realm_icon_source: 'U' });
  t.equal((await s.api('GET', '/server_settings', null)).body.realm_icon, answer.body.icon_url, 'the login page shows it too');

  const file = await s.fastify.inject({ method: 'GET', url: new URL(answer.body.icon_url).pathname });
  t.equal(file.statusCode, 200);
  t.equal(file.headers['content-type'], 'image/png');
  t.match(await imageInfo(file.rawPayload), { format: 'png', width: 100, height: 100 }, 'kept as a 100x100 square');

  const redirect = await s.fastify.inject({ method: 'GET', url: '/api/v1/realm/icon?foo=bar', headers: { authorization: member.auth } });
  t.equal(redirect.statusCode, 302);
  t.equal(redirect.headers.location, `${answer.body.icon_url}&foo=bar`);

  const removed = await verifyAction(t, s, member, () => s.api('DELETE', '/realm/icon', admin), { register });
  t.match(removed, [{ type: 'realm', op: 'update_dict', property: 'icon', data: { icon_source: 'G' } }]);
  t.equal((await s.fastify.inject({ method: 'GET', url: new URL(answer.body.icon_url).pathname })).statusCode, 404, 'the old upload is no longer served');

  const tables = allProjections.flatMap((p) => p.tables);
  const sums = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), sums, 'identical read tables after rebuild');
});

t.test('organization logos: day and night', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const uploaded = await verifyAction(t, s, member, async () => {
    const r = await sendFiles(s, s.owner, 'POST', '/realm/logo', [{ field: 'file', data: await solidPng(1600, { r: 0, g: 0, b: 200 }) }], { night: 'true' });
    t.same(r.body, { result: 'success', msg: '' });
  }, { register });
  t.match(uploaded, [{ type: 'realm', op: 'update_dict', property: 'night_logo', data: { night_logo_source: 'U', night_logo_url: /night_logo\.png\?version=1$/ } }]);
  const state = (await s.api('POST', '/register', member, register)).body;
  t.equal(state.realm_logo_source, 'D', 'the day logo is untouched');
  const file = await s.fastify.inject({ method: 'GET', url: new URL(state.realm_night_logo_url).pathname });
  t.match(await imageInfo(file.rawPayload), { width: 100, height: 100 }, 'kept within 800x100');

  const night = await s.fastify.inject({ method: 'GET', url: '/api/v1/realm/logo?night=true', headers: { authorization: member.auth } });
  t.equal(night.statusCode, 302);
  t.match(night.headers.location, /night_logo\.png\?version=1&night=true$/);
  const day = await s.fastify.inject({ method: 'GET', url: '/api/v1/realm/logo?night=false', headers: { authorization: member.auth } });
  t.match(day.headers.location, /zulip-org-logo\.svg\?night=false$/);

  const removed = await verifyAction(t, s, member, () => s.api('DELETE', '/realm/logo', s.owner, { night: true }), { register });
  t.match(removed, [{ property: 'night_logo', data: { night_logo_source: 'D' } }]);
});

t.test('organization images: permissions and errors', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const png = await solidPng(10, { r: 1, g: 2, b: 3 });
  t.same((await sendFiles(s, member, 'POST', '/realm/icon', [{ field: 'file', data: png }])).body,
    { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' });
  t.equal((await s.api('DELETE', '/realm/icon', member)).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await s.api('DELETE', '/realm/logo', member, { night: false })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.same((await s.api('POST', '/realm/icon', s.owner)).body, { result: 'error', msg: 'You must upload exactly one icon.', code: 'BAD_REQUEST' });
  t.same((await sendFiles(s, s.owner, 'POST', '/realm/icon', [{ field: 'a', data: png }, { field: 'b', data: png }])).body,
    { result: 'error', msg: 'You must upload exactly one icon.', code: 'BAD_REQUEST' });
  t.same((await sendFiles(s, s.owner, 'POST', '/realm/logo', [], { night: 'false' })).body, { result: 'error', msg: 'You must upload exactly one logo.', code: 'BAD_REQUEST' });
  t.same((await sendFiles(s, s.owner, 'POST', '/realm/icon', [{ field: 'f', data: Buffer.from('not an image') }])).body,
    { result: 'error', msg: 'Could not decode image; did you upload an image file?', code: 'BAD_REQUEST' });
  t.same((await sendFiles(s, s.owner, 'POST', '/realm/icon', [{ field: 'f', data: Buffer.alloc(5 * 1024 * 1024 + 1) }])).body,
    { result: 'error', msg: 'Uploaded file is larger than the allowed limit of 5 MiB', code: 'BAD_REQUEST' });
  t.equal((await sendFiles(s, s.owner, 'POST', '/realm/logo', [{ field: 'f', data: png }])).body.code, 'REQUEST_VARIABLE_MISSING');
  for (const path of ['/user_avatars/1/realm/icon.png', '/user_avatars/1/realm/other.png', '/user_avatars/x/realm/logo.png']) {
    t.equal((await s.fastify.inject({ method: 'GET', url: path })).statusCode, 404, path);
  }
});
