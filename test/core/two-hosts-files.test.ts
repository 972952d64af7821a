import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testConfig } from '../helpers/config.js';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { freePort } from '../helpers/ports.js';
import { basicAuth } from '../helpers/server.js';
import { PNG } from '../helpers/upload.js';
import { startTestS3 } from '../helpers/s3.js';
import { S3Storage } from '../../src/storage/index.js';

// Two server processes with data directories of their own (two hosts, as far as files go) on one
// PostgreSQL and one NATS: whatever one stores, the other serves.
const productionPass = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_NATS_URL);

async function twoHosts(t: Test, storageEnv: Record<string, string>) {
  const config = await testConfig();
  const kek = randomBytes(32).toString('hex');
  const dirs = [0, 1].map((i) => mkdtempSync(path.join(tmpdir(), `host-${i}-`)));
  t.teardown(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const base = { DATABASE_URL: config.databaseUrl!, NATS_URL: config.natsUrl!, NATS_STREAM: config.natsStream, DATA_KEY_SECRET: kek, ...storageEnv };
  const servers: ChildServer[] = [];
  t.teardown(async () => {
    for (const server of servers) await killHard(server);
  });
  // The first creates the organization; the second starts on it.
  servers.push(await startChildServer({ ...base, DATA_DIR: dirs[0]!, PORT: String(await freePort()) }, 120_000));
  servers.push(await startChildServer({ ...base, DATA_DIR: dirs[1]!, PORT: String(await freePort()) }, 120_000));
  const [a, b] = servers as [ChildServer, ChildServer];
  const key = /key=(\S+)/.exec(readFileSync(path.join(dirs[0]!, 'zuliprc'), 'utf8'))![1]!;
  const auth = basicAuth('owner@example.com', key);
  const send = async (server: ChildServer, method: string, url: string, form: FormData) => {
    const r = await fetch(`${server.url}/api/v1${url}`, { method, headers: { authorization: auth }, body: form });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const get = (server: ChildServer, url: string, headers: Record<string, string> = {}) => fetch(`${server.url}${url}`, { headers: { authorization: auth, ...headers } });

  // An attachment: uploaded through A, downloaded (whole and a range) through B.
  const bytes = randomBytes(700_000);
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'report.pdf');
  const up = await send(a, 'POST', '/user_uploads', form);
  t.equal(up.status, 200, 'uploaded through host A');
  const whole = await get(b, up.body.url as string);
  t.equal(whole.status, 200, 'served by host B');
  t.ok(Buffer.from(await whole.arrayBuffer()).equals(bytes), 'the same bytes');
  const part = await get(b, up.body.url as string, { range: 'bytes=300000-300099' });
  t.equal(part.status, 206);
  t.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(300_000, 300_100)), 'a range of it through B');

  // An avatar: set through B, served by A.
  const avatar = new FormData();
  avatar.append('file', new Blob([PNG], { type: 'image/png' }), 'me.png');
  t.equal((await send(b, 'POST', '/users/me/avatar', avatar)).status, 200, 'avatar set through host B');
  const me = (await (await get(a, '/api/v1/users/me')).json()) as { user_id: number; avatar_url: string };
  const avatarFromA = await get(a, me.avatar_url);
  t.equal(avatarFromA.status, 200, 'the avatar is served by host A');
  t.ok(Buffer.from(await avatarFromA.arrayBuffer()).equals(PNG), 'the same image');

  // A custom emoji: added through A, served by B.
  const emoji = new FormData();
  emoji.append('file', new Blob([PNG], { type: 'image/png' }), 'wave.png');
  t.equal((await send(a, 'POST', '/realm/emoji/two_hosts', emoji)).status, 200, 'emoji added through host A');
  const listed = (await (await get(b, '/api/v1/realm/emoji')).json()) as { emoji: Record<string, { name: string; source_url: string }> };
  const added = Object.values(listed.emoji).find((e) => e.name === 'two_hosts');
  t.ok(added, 'host B lists it');
  const image = await get(b, added!.source_url);
  t.equal(image.status, 200, 'host B serves its image');
  t.match(image.headers.get('content-type'), /^image\//);

  for (const dir of dirs) t.notOk(existsSync(path.join(dir, 'uploads')), `nothing was written to ${path.basename(dir)}/uploads`);
  return { pathId: (up.body.url as string).replace('/user_uploads/', '') };
}

t.test('two hosts on the PostgreSQL store (the default with DATABASE_URL)', { skip: !productionPass && 'PostgreSQL + NATS only' }, async (t) => {
  await twoHosts(t, {});
});

t.test('two hosts on the S3 store', { skip: !productionPass && 'PostgreSQL + NATS only' }, async (t) => {
  const s3 = await startTestS3(t);
  const { pathId } = await twoHosts(t, s3.env);
  const stored = await new S3Storage({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true }).stat(decodeURIComponent(pathId));
  t.ok(stored && stored.size > 700_000, 'the upload is an object in the bucket (sealed: a little larger than the file)');
});
