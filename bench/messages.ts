/**
 * POST /messages throughput and latency (1, 8, 64 concurrent senders to one channel with 100
 * subscribers) against the plain fastify + pg ceiling (one INSERT per request), and GET /messages
 * latency for a channel+topic narrow (anchor newest, 100 messages) on 1,000,000 messages; real
 * PostgreSQL and NATS, over real HTTP. Writes bench/results/messages.json.
 *
 *   npx tsx bench/messages.ts      (BENCH_SECONDS, BENCH_MESSAGES, BENCH_DATABASE_URL, BENCH_NATS_URL)
 *
 * The 1,000,000 messages for the read test are written straight into the read table with
 * generate_series: GET /messages reads only read tables, and folding a million log events first
 * would measure the projection runner instead.
 */
import Fastify from 'fastify';
import formbody from '@fastify/formbody';
import { sql } from 'kysely';
import pg from 'pg';
import os from 'node:os';
import { loadConfig } from '../src/config.js';
import { buildServer } from '../src/build-server.js';
import { allProjections } from '../projections/index.js';
import { createUser } from '../src/services/users.js';
import { Role } from '../src/domain/roles.js';
import { freshDatabase, percentile, throughput, writeResult } from './util.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_LEVELS ?? '1,8,64').split(',').map(Number);
const SUBSCRIBERS = 100;
const SEED = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const GET_REQUESTS = Number(process.env.BENCH_GETS ?? 300);

const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

async function post(url: string, auth: string | null, body: Record<string, string>): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(body).toString(),
  });
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

const database = await freshDatabase('bench_messages');
const config = {
  ...loadConfig({ RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' }),
  databaseUrl: database.url,
  natsUrl: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
  natsStream: `BENCH_${Date.now()}`,
  port: 0,
};
const server = await buildServer(config, { projections: allProjections });
const ceilingApp = Fastify();
const ceilingPool = new pg.Pool({ connectionString: database.url, max: 20 });
try {
  await server.fastify.listen({ host: '127.0.0.1', port: 0 });
  const address = server.fastify.server.address() as { port: number };
  const base = `http://127.0.0.1:${address.port}/api/v1`;
  const db = server.platform.db;
  const owner = await db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const ownerAuth = basic(owner.delivery_email, owner.api_key);

  console.log(`creating ${SUBSCRIBERS} users and a channel`);
  const users: Array<{ id: number; auth: string }> = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const email = `sender${i}@example.com`;
    const meta = { actorId: owner.id, realmId: owner.realm_id, client: 'bench', requestId: `bench-${i}`, now: new Date() };
    const created = await createUser(server.platform, meta, { email, full_name: `Sender ${i}`, role: Role.MEMBER });
    users.push({ id: created.user_id, auth: basic(email, created.api_key) });
  }
  await post(`${base}/users/me/subscriptions`, ownerAuth, {
    subscriptions: JSON.stringify([{ name: 'bench' }]),
    principals: JSON.stringify(users.map((u) => u.id)),
  });
  const stream = await db.selectFrom('streams').select('id').where('name', '=', 'bench').executeTakeFirstOrThrow();

  // The ceiling: plain fastify + pg, one INSERT per request, same parsing and HTTP path.
  await ceilingPool.query('CREATE TABLE plain_messages (id bigserial PRIMARY KEY, sender text NOT NULL, topic text NOT NULL, content text NOT NULL, date_sent bigint NOT NULL)');
  await ceilingApp.register(formbody);
  ceilingApp.post('/messages', async (request) => {
    const body = request.body as Record<string, string>;
    const result = await ceilingPool.query('INSERT INTO plain_messages (sender, topic, content, date_sent) VALUES ($1, $2, $3, $4) RETURNING id', [
      request.headers.authorization ?? '', body.topic ?? '', body.content ?? '', Math.floor(Date.now() / 1000),
    ]);
    return { result: 'success', msg: '', id: Number(result.rows[0].id) };
  });
  await ceilingApp.listen({ host: '127.0.0.1', port: 0 });
  const ceilingUrl = `http://127.0.0.1:${(ceilingApp.server.address() as { port: number }).port}/messages`;

  const send = [];
  for (const senders of LEVELS) {
    const ours = await throughput(senders, SECONDS * 1000, async (w, i) => {
      const user = users[w % users.length]!;
      await post(`${base}/messages`, user.auth, { type: 'stream', to: String(stream.id), topic: `topic ${w % 10}`, content: `message ${i} from ${w} with **some** markdown` });
    });
    const ceiling = await throughput(senders, SECONDS * 1000, async (w, i) => {
      await post(ceilingUrl, users[w % users.length]!.auth, { type: 'stream', to: String(stream.id), topic: `topic ${w % 10}`, content: `message ${i} from ${w} with **some** markdown` });
    });
    const row = {
      senders,
      messages_per_s: ours.perSecond,
      p50_ms: percentile(ours.latencies, 50),
      p99_ms: percentile(ours.latencies, 99),
      ceiling_per_s: ceiling.perSecond,
      ceiling_p50_ms: percentile(ceiling.latencies, 50),
      ceiling_p99_ms: percentile(ceiling.latencies, 99),
      ratio: Number((ours.perSecond / ceiling.perSecond).toFixed(2)),
    };
    send.push(row);
    console.log(JSON.stringify(row));
  }

  console.log(`seeding ${SEED} messages`);
  const seedStarted = performance.now();
  const recipient = await db.selectFrom('messages').select('recipient_id').where('stream_id', '=', stream.id).limit(1).executeTakeFirstOrThrow();
  const max = await db.selectFrom('messages').select((eb) => eb.fn.max('id').as('m')).executeTakeFirstOrThrow();
  const start = Number(max.m ?? 0) + 1;
  const chunk = 200_000;
  for (let from = 0; from < SEED; from += chunk) {
    const count = Math.min(chunk, SEED - from);
    await sql`
      INSERT INTO messages (id, realm_id, stream_id, topic, sender_id, date_sent, content, rendered_content, recipient_id, dm_key, client,
        is_me_message, has_link, has_image, has_attachment, stream_wildcard, topic_wildcard, last_edit_timestamp, edit_history, version)
      SELECT ${start + from} + g, ${owner.realm_id}, ${stream.id}, 'seed topic ' || (g % 100), ${users[0]!.id}, 1700000000 + g,
        'seeded message number ' || g, '<p>seeded message number ' || g || '</p>', ${recipient.recipient_id}, NULL, 'bench',
        false, false, false, false, false, false, NULL, NULL, 1
      FROM generate_series(0, ${count - 1}) AS g`.execute(db);
  }
  await sql`SELECT setval('message_id_seq', ${start + SEED})`.execute(db);
  await sql`ANALYZE messages`.execute(db);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const total = await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();

  const reader = users[1]!;
  const latencies: number[] = [];
  for (let i = 0; i < GET_REQUESTS; i++) {
    const narrow = JSON.stringify([{ operator: 'channel', operand: stream.id }, { operator: 'topic', operand: `seed topic ${i % 100}` }]);
    const url = `${base}/messages?${new URLSearchParams({ anchor: 'newest', num_before: '100', num_after: '0', narrow })}`;
    const t0 = performance.now();
    const response = await fetch(url, { headers: { authorization: reader.auth } });
    const body = (await response.json()) as { messages: unknown[] };
    if (i >= 10) latencies.push(performance.now() - t0); // the first few warm the caches
    if (body.messages.length !== 100) throw new Error(`expected 100 messages, got ${body.messages.length}`);
  }
  const get = { messages_in_database: Number(total.n), requests: latencies.length, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) };
  console.log(JSON.stringify(get));

  const file = writeResult('messages', {
    benchmark: 'messages',
    date: new Date().toISOString(),
    seconds_per_level: SECONDS,
    machine: { cpus: os.cpus().length },
    setup: { subscribers: SUBSCRIBERS, transport: 'HTTP on 127.0.0.1', database: 'PostgreSQL', bus: 'NATS', seed_seconds: Number(seedSeconds.toFixed(1)) },
    targets: { ratio_at_64_senders: '>= 0.3', send_p99_ms_at_8_senders: '< 50', get_p99_ms_at_1m: '< 20' },
    send,
    get,
  });
  console.log(`written to ${file}`);
} finally {
  await ceilingApp.close();
  await ceilingPool.end();
  await server.close();
  await database.drop();
}
