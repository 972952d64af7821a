// Custom emoji by the real server's rules (found by replaying its test_realm_emoji.py against this
// server): adding emoji is for members and administrators, not bots; a name with slashes reaches the
// name check (or, when deleting, is an emoji that does not exist) instead of being no route.
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { solidPng } from '../helpers/images.js';

async function upload(s: TestServer, as: TestUser, name: string) {
  const boundary = `----emoji${Math.random().toString(16).slice(2)}`;
  const image = await solidPng(8, { r: 10, g: 20, b: 30 });
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f1"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const r = await s.fastify.inject({
    method: 'POST', url: `/api/v1/realm/emoji/${name}`, payload,
    headers: { authorization: as.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
  });
  return { status: r.statusCode, body: r.json() };
}

t.test('bots may not add custom emoji', async (t) => {
  const s = await startTestServer(t);
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const bot = await s.user(Role.MEMBER, 'Hamlet Bot', { bot_type: 1, bot_owner_id: hamlet.id });
  t.same(await upload(s, bot, 'bot_emoji'), { status: 400, body: { result: 'error', msg: 'This endpoint does not accept bot requests.', code: 'BAD_REQUEST' } });
  t.equal((await upload(s, hamlet, 'bot_emoji')).status, 200, 'their owner may');
  t.same(Object.keys((await s.api('GET', '/realm/emoji', bot)).body.emoji).length, 1, 'bots still read the list');
});

t.test('names with slashes are names, not other routes', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Iago');
  const posted = await upload(s, admin, 'my/emoji/with/forward/slash/');
  t.same(posted, {
    status: 400,
    body: { result: 'error', msg: 'Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.', code: 'BAD_REQUEST' },
  });
  const deleted = await s.api('DELETE', '/realm/emoji/my/emoji', admin);
  t.equal(deleted.status, 404);
  t.equal(deleted.body.msg, "Emoji 'my/emoji' does not exist");
  t.equal((await upload(s, admin, 'my_emoji')).status, 200, 'a plain name still works');
  t.equal((await s.api('DELETE', '/realm/emoji/my_emoji', admin)).status, 200);
});
