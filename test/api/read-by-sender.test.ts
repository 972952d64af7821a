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

t.test("a message's client: the `client` parameter, else the User-Agent's name (no User-Agent: test/unit/http/client-name.test.ts)", async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  await createChannel(s, alice, 'general', []);
  const clientOf = async (id: number) => (await s.api('GET', `/messages/${id}`, alice)).body.message.client as string;
  t.equal(await clientOf(await sendAs(s, alice, 'ZulipMobile/27.192 (Android 14)')), 'ZulipMobile');
  t.equal(await clientOf(await sendAs(s, alice, 'Zulip Terminal/0.7.0 (Linux)')), 'Zulip Terminal', 'a name may hold a space');
  t.equal(await clientOf(await sendAs(s, alice, 'python-requests/2.31.0')), 'python-requests');
  const named = await sendAs(s, alice, 'curl/8.5.0', { client: 'ZulipMobile' });
  t.equal(await clientOf(named), 'ZulipMobile', 'the parameter wins over the User-Agent');
  t.ok(await readFor(s, alice, named), 'and decides read_by_sender as the client it names');
  const r = await s.api('POST', '/messages', alice, { type: 'stream', to: 'general', topic: 'own', content: 'x', client: 'my-bot' });
  t.equal(r.status, 200);
  t.notOk(r.body.ignored_parameters_unsupported, 'client is no ignored parameter');
  t.equal(await clientOf(r.body.id), 'my-bot');
});
