/**
 * read_by_sender unset: the sender's own message is read when they wrote it in a Zulip app, unread
 * when it came through the API from anything else (an integration using their key), as the real
 * server decides from the client name. Scheduled messages to oneself stay unread either way.
 */
import t from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel } from '../helpers/channels-fixture.js';

async function sendAs(s: TestServer, as: TestUser, userAgent: string | undefined, extra: Record<string, string> = {}): Promise<number> {
  const r = await s.fastify.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: as.auth, 'content-type': 'application/x-www-form-urlencoded', ...(userAgent ? { 'user-agent': userAgent } : {}) },
    payload: new URLSearchParams({ type: 'stream', to: 'general', topic: 'own', content: 'mine', ...extra }).toString(),
  });
  t.equal(r.statusCode, 200, r.body);
  return (r.json() as { id: number }).id;
}

const readFor = async (s: TestServer, as: TestUser, id: number) =>
  ((await s.api('GET', `/messages/${id}`, as)).body.message.flags as string[]).includes('read');

t.test('the client decides whether the sender has read their own message', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  await createChannel(s, alice, 'general', []);
  for (const agent of ['ZulipMobile/27.192 (Android 14)', 'ZulipElectron/5.11.1', 'ZulipTerminal/0.7.0', 'ZulipDesktop/5.0', 'website']) {
    t.ok(await readFor(s, alice, await sendAs(s, alice, agent)), `${agent}: read`);
  }
  for (const agent of ['ZulipPython/0.9.0 (Linux; 3.11)', 'ZulipJS/2.1.0', 'curl/8.5.0', 'Mozilla/5.0 (X11)', undefined]) {
    t.notOk(await readFor(s, alice, await sendAs(s, alice, agent)), `${agent ?? 'no user agent'}: unread`);
  }
  t.ok(await readFor(s, alice, await sendAs(s, alice, 'curl/8.5.0', { read_by_sender: 'true' })), 'asked for: read');
  t.notOk(await readFor(s, alice, await sendAs(s, alice, 'ZulipMobile/27.192', { read_by_sender: 'false' })), 'asked for: unread');
});
