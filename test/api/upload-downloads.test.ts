import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.js';
import { PNG, sendFiles } from '../helpers/upload.js';

function multipart(name: string, type: string, data: Buffer) {
  const boundary = `----ranges${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, contentType: `multipart/form-data; boundary=${boundary}` };
}

async function upload(s: TestServer, as: TestUser, name: string, type: string, data: Buffer) {
  const { payload, contentType } = multipart(name, type, data);
  const r = await s.fastify.inject({ method: 'POST', url: '/api/v1/user_uploads', headers: { 'content-type': contentType, authorization: as.auth }, payload });
  return { status: r.statusCode, body: r.json() };
}

async function get(s: TestServer, as: TestUser | null, url: string, headers: Record<string, string> = {}) {
  const r = await s.fastify.inject({ method: 'GET', url, headers: { ...(as ? { authorization: as.auth } : {}), ...headers } });
  return { status: r.statusCode, body: r.rawPayload, headers: r.headers };
}

t.test('downloads: byte ranges, validators and caching headers like the real server', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user();
  const data = randomBytes(300_000);
  const up = await upload(s, alice, 'movie.mp4', 'video/mp4', data);
  t.equal(up.status, 200);
  const url = up.body.url as string;

  const whole = await get(s, alice, url);
  t.equal(whole.status, 200);
  t.ok(whole.body.equals(data), 'the whole file');
  t.equal(whole.headers['cache-control'], 'private, immutable', "private, immutable (the real server's patch_cache_control)");
  t.equal(whole.headers['accept-ranges'], 'bytes');
  t.match(whole.headers.etag, /^"[A-Za-z0-9_-]+-[0-9a-f]+"$/, 'a strong ETag');
  t.ok(whole.headers['last-modified'], 'Last-Modified is the upload time');
  t.match(whole.headers['content-disposition'], /^inline; filename\*=UTF-8''movie\.mp4$/, 'Content-Disposition rules unchanged');

  const part = await get(s, alice, url, { range: 'bytes=100-199' });
  t.equal(part.status, 206, 'a range: 206');
  t.equal(part.headers['content-range'], `bytes 100-199/${data.length}`);
  t.ok(part.body.equals(data.subarray(100, 200)), 'exactly those bytes, decrypted from the sealed file');
  const suffix = await get(s, alice, url, { range: 'bytes=-10' });
  t.same([suffix.status, suffix.headers['content-range']], [206, `bytes ${data.length - 10}-${data.length - 1}/${data.length}`]);
  t.ok(suffix.body.equals(data.subarray(-10)), 'the last ten bytes');
  const open = await get(s, alice, url, { range: `bytes=${data.length - 3}-` });
  t.ok(open.body.equals(data.subarray(-3)), 'an open-ended range');
  const clipped = await get(s, alice, url, { range: `bytes=5-${data.length + 1000}` });
  t.same([clipped.status, clipped.headers['content-range']], [206, `bytes 5-${data.length - 1}/${data.length}`], 'a range past the end is clipped');

  const beyond = await get(s, alice, url, { range: `bytes=${data.length}-` });
  t.equal(beyond.status, 416, 'nothing of the range exists: 416');
  t.equal(beyond.headers['content-range'], `bytes */${data.length}`);
  t.match(JSON.parse(beyond.body.toString()), { result: 'error', code: 'BAD_REQUEST' }, 'as a Zulip error envelope');

  const several = await get(s, alice, url, { range: 'bytes=0-1,10-11' });
  t.same([several.status, several.body.length], [200, data.length], 'several ranges: the whole file');
  const garbage = await get(s, alice, url, { range: 'pages=1-2' });
  t.same([garbage.status, garbage.body.length], [200, data.length], 'a range unit we do not know: the whole file');

  const cached = await get(s, alice, url, { 'if-none-match': whole.headers.etag as string });
  t.same([cached.status, cached.body.length], [304, 0], 'If-None-Match with the ETag: 304');
  const since = await get(s, alice, url, { 'if-modified-since': whole.headers['last-modified'] as string });
  t.equal(since.status, 304, 'If-Modified-Since the upload: 304');
  const stale = await get(s, alice, url, { range: 'bytes=0-9', 'if-range': '"other"' });
  t.same([stale.status, stale.body.length], [200, data.length], 'If-Range naming another version: the whole file');
  const fresh = await get(s, alice, url, { range: 'bytes=0-9', 'if-range': whole.headers.etag as string });
  t.equal(fresh.status, 206, 'If-Range naming this version: the range');

  const bob = await s.user();
  t.equal((await get(s, bob, url, { range: 'bytes=0-9' })).status, 404, 'a range of a file you may not see is still a 404');

  // Public images too: an avatar.
  t.equal((await sendFiles(s, alice, 'POST', '/users/me/avatar', [{ field: 'file', data: PNG }])).status, 200);
  const avatarUrl = `/user_avatars/1/${alice.id}.png`;
  const avatar = await get(s, null, avatarUrl);
  t.equal(avatar.status, 200);
  const avatarPart = await get(s, null, avatarUrl, { range: 'bytes=0-3' });
  t.same([avatarPart.status, avatarPart.body.length], [206, 4], 'an avatar honours Range');
  t.equal((await get(s, null, avatarUrl, { 'if-none-match': avatar.headers.etag as string })).status, 304);
});

t.test('the upload size limit stops reading the body one byte past it', async (t) => {
  const before = process.env.UPLOAD_MAX_FILE_SIZE_MIB;
  process.env.UPLOAD_MAX_FILE_SIZE_MIB = '1';
  t.teardown(() => {
    if (before === undefined) delete process.env.UPLOAD_MAX_FILE_SIZE_MIB;
    else process.env.UPLOAD_MAX_FILE_SIZE_MIB = before;
  });
  const s = await startTestServer(t);
  const alice = await s.user();
  const MiB = 1024 * 1024;
  t.equal((await upload(s, alice, 'fits.bin', 'application/octet-stream', Buffer.alloc(MiB))).status, 200, 'exactly the limit is accepted');
  const over = await upload(s, alice, 'over.bin', 'application/octet-stream', Buffer.alloc(MiB + 1));
  t.same([over.status, over.body.msg], [400, 'Uploaded file is larger than the allowed limit of 1 MiB'], "one byte over: Zulip's message");
  const far = await upload(s, alice, 'far.bin', 'application/octet-stream', Buffer.alloc(3 * MiB));
  t.same([far.status, far.body.result], [413, 'error'], 'far over: the parser stops reading (413), nothing is stored');
  t.equal((await s.api('GET', '/attachments', alice)).body.attachments.length, 1, 'only the file that fits was kept');
});
