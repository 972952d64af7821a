import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { createChannel } from '../helpers/typing-fixture.js';

async function upload(s: TestServer, as: TestUser, filename: string, text: string) {
  const boundary = `----t${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n`),
    Buffer.from(text), Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const r = await s.fastify.inject({ method: 'POST', url: '/api/v1/user_uploads', headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: as.auth }, payload });
  return r.json().url as string;
}

const fetchUrl = async (s: TestServer, url: string) => {
  const r = await s.fastify.inject({ method: 'GET', url });
  return { status: r.statusCode, text: r.body, json: () => r.json() };
};

t.test('temporary upload URLs', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'temp-uploads-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const carol = await s.user(Role.MEMBER, 'Carol');
  const url = await upload(s, alice, 'notes.txt', 'secret notes');
  const apiPath = url.replace(/^\/user_uploads\//, '/user_uploads/');

  const own = await s.api('GET', apiPath, alice);
  t.equal(own.status, 200, JSON.stringify(own.body));
  t.match(own.body.url, /^\/user_uploads\/temporary\/[0-9A-F]+\/notes\.txt$/, 'the real server shape');
  const served = await fetchUrl(s, own.body.url);
  t.equal(served.status, 200);
  t.equal(served.text, 'secret notes', 'served without credentials');

  const denied = await s.api('GET', apiPath, bob);
  t.same(denied.body, { result: 'error', msg: 'File not found', code: 'BAD_REQUEST' }, 'Bob cannot see the file yet');
  t.equal(denied.status, 404);
  const channel = await createChannel(s, alice, 'shared', { subscribers: [alice.id, bob.id], invite_only: true });
  await s.api('POST', '/messages', alice, { type: 'stream', to: channel, topic: 't', content: `[notes](${url})` });
  const bobs = await s.api('GET', apiPath, bob);
  t.equal(bobs.status, 200, 'a reader of a message linking it may');
  t.equal((await fetchUrl(s, bobs.body.url)).text, 'secret notes');
  t.equal((await s.api('GET', apiPath, carol)).status, 404, 'Carol may not');
  t.equal((await s.api('GET', '/user_uploads/1/00/nothing/x.txt', alice)).status, 404);
  t.equal((await s.api('GET', apiPath, null)).status, 401);
  const spaced = await upload(s, alice, 'my notes.txt', 'spaced');
  const spacedUrl = (await s.api('GET', spaced, alice)).body.url as string;
  t.equal(spacedUrl.split('/').pop(), spaced.split('/').pop(), 'the file name as stored');
  t.equal((await fetchUrl(s, spacedUrl)).text, 'spaced');

  const token = own.body.url.split('/')[3] as string;
  const wrongName = await fetchUrl(s, `/user_uploads/temporary/${token}/other.txt`);
  t.same([wrongName.status, wrongName.json().msg], [400, 'Invalid filename']);
  const forged = token.slice(0, -2) + (token.endsWith('00') ? '11' : '00');
  t.same((await fetchUrl(s, `/user_uploads/temporary/${forged}/notes.txt`)).json().msg, 'Invalid token', 'a changed token');
  t.same((await fetchUrl(s, '/user_uploads/temporary/zz/notes.txt')).json().msg, 'Invalid token');

  const realNow = Date.now;
  Date.now = () => realNow() + 61_000;
  try {
    const expired = await fetchUrl(s, own.body.url);
    t.same([expired.status, expired.json().msg], [400, 'Invalid token'], 'gone after 60 s');
  } finally {
    Date.now = realNow;
  }
  await s.api('POST', '/users/me/api_key/regenerate', alice);
  t.equal((await fetchUrl(s, own.body.url)).status, 400, "regenerating the user's API key revokes it");
  t.equal((await fetchUrl(s, url)).status, 401, 'the plain URL still needs credentials');
});
