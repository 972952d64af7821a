/**
 * Widgets and bot storage under load (issue 25), real PostgreSQL and NATS over real HTTP:
 *  - a `/poll` with 5 options and one vote (POST /submessage) from each of 50 users: p50/p99 per vote;
 *  - a bot sending 100 messages/s and writing its storage once per message (PUT /bot_storage):
 *    p50/p99 of the PUT;
 *  - other users' sends at a steady rate, measured alone and then while the bot runs, in the same
 *    run, so the two figures compare.
 * Writes bench/results/widgets.json.
 *
 *   npx tsx bench/widgets.ts      (BENCH_SECONDS, BENCH_DATABASE_URL, BENCH_NATS_URL)
 *
 * The server runs in this process, so node's own flags profile it, e.g. a CPU profile per thread:
 *   node --cpu-prof --cpu-prof-dir=/tmp/widgets-prof --import tsx bench/widgets.ts
 */
import os from 'node:os';
import { loadConfig } from '../src/config.js';
import { buildServer } from '../src/build-server.js';
import { allProjections } from '../projections/index.js';
import { createUser } from '../src/services/users.js';
import { Role } from '../src/domain/roles.js';
import { freshDatabase, percentile, writeResult } from './util.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const VOTERS = 50;
const BOT_RATE = Number(process.env.BENCH_BOT_RATE ?? 100);
const OTHERS_RATE = 20;

const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

async function call(method: string, url: string, auth: string, body: Record<string, string>): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
    body: new URLSearchParams(body).toString(),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return { ms, json: JSON.parse(text) };
}

/** GET /health/live (no authentication, no database): what any request waits for in the same run. */
async function floorProbe(root: string, into: number[]): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${root}/health/live`);
  await response.text();
  if (response.status === 200) into.push(performance.now() - started);
}

/** Runs `task` every 1000/rate ms for `seconds` (open loop: a slow answer does not delay the next start). */
let errors = 0;
let firstError = '';

async function atRate(rate: number, seconds: number, task: (i: number) => Promise<number>): Promise<number[]> {
  const latencies: number[] = [];
  const pending: Array<Promise<void>> = [];
  const started = performance.now();
  const total = Math.round(rate * seconds);
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // A failed request is counted, not fatal: an overloaded machine resets connections.
    pending.push(task(i).then((ms) => void latencies.push(ms), (error: Error) => {
      errors += 1;
      firstError ||= String(error.cause ?? error.message);
    }));
  }
  await Promise.all(pending);
  return latencies;
}

const summary = (values: number[]) => ({
  count: values.length,
  p50_ms: Number(percentile(values, 50).toFixed(1)),
  p99_ms: Number(percentile(values, 99).toFixed(1)),
});

const database = await freshDatabase('bench_widgets');
const config = {
  ...loadConfig({ RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' }),
  databaseUrl: database.url,
  natsUrl: process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222',
  natsStream: `BENCH_${Date.now()}`,
  port: 0,
};
const server = await buildServer(config, { projections: allProjections });
try {
  await server.fastify.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(server.fastify.server.address() as { port: number }).port}/api/v1`;
  const db = server.platform.db;
  const owner = await db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const ownerAuth = basic(owner.delivery_email, owner.api_key);
  const meta = (i: number) => ({ actorId: owner.id, realmId: owner.realm_id, client: 'bench', requestId: `bench-${i}`, now: new Date() });

  console.log(`creating ${VOTERS} users, a bot and a channel`);
  const users: Array<{ id: number; auth: string }> = [];
  for (let i = 0; i < VOTERS; i++) {
    const email = `voter${i}@example.com`;
    const created = await createUser(server.platform, meta(i), { email, full_name: `Voter ${i}`, role: Role.MEMBER });
    users.push({ id: created.user_id, auth: basic(email, created.api_key) });
  }
  const botEmail = 'keeper-bot@example.com';
  const bot = await createUser(server.platform, meta(VOTERS), { email: botEmail, full_name: 'Keeper', role: Role.MEMBER, bot_type: 1, bot_owner_id: owner.id });
  const botAuth = basic(botEmail, bot.api_key);
  await call('POST', `${base}/users/me/subscriptions`, ownerAuth, {
    subscriptions: JSON.stringify([{ name: 'bench' }]),
    principals: JSON.stringify([...users.map((u) => u.id), bot.user_id]),
  });

  // The poll: 5 options, one vote from each of the 50 users (10 at a time).
  const poll = await call('POST', `${base}/messages`, users[0]!.auth, {
    type: 'stream', to: 'bench', topic: 'poll', content: '/poll Where do we meet?\n- Kitchen\n- Roof\n- Lobby\n- Park\n- Online',
  });
  const votes: number[] = [];
  const voteFloor: number[] = [];
  const root = base.replace(/\/api\/v1$/, '');
  for (let start = 0; start < VOTERS; start += 10) {
    await Promise.all([floorProbe(root, voteFloor), ...users.slice(start, start + 10).map(async (u, k) => {
      const option = (start + k) % 5;
      const { ms } = await call('POST', `${base}/submessage`, u.auth, {
        message_id: String(poll.json.id), msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: `canned,${option}`, vote: 1 }),
      });
      votes.push(ms);
    })]);
  }
  const pollRows = await db.selectFrom('submessages').select((eb) => eb.fn.countAll<string>().as('n')).where('message_id', '=', poll.json.id).executeTakeFirstOrThrow();
  console.log(`poll: ${JSON.stringify(summary(votes))}; ${pollRows.n} submessages stored`);

  const otherSend = (i: number) =>
    call('POST', `${base}/messages`, users[1 + (i % (VOTERS - 1))]!.auth, { type: 'stream', to: 'bench', topic: `chat ${i % 5}`, content: `message ${i} with **markdown**` })
      .then((r) => r.ms);

  console.log(`others alone: ${OTHERS_RATE}/s for ${SECONDS} s`);
  const alone = await atRate(OTHERS_RATE, SECONDS, otherSend);

  console.log(`others while the bot sends ${BOT_RATE}/s and writes its storage once per message`);
  const puts: number[] = [];
  let storageWrites: Promise<void> = Promise.resolve();
  const botSends: number[] = [];
  const botFloor: number[] = [];
  const [, withBot] = await Promise.all([
    atRate(10, SECONDS, () => floorProbe(root, botFloor).then(() => 0)),
    atRate(OTHERS_RATE, SECONDS, otherSend),
    atRate(BOT_RATE, SECONDS, async (i) => {
      const sent = await call('POST', `${base}/messages`, botAuth, { type: 'stream', to: 'bench', topic: 'bot', content: `count is ${i}` });
      botSends.push(sent.ms);
      // A bot's state handler writes one update at a time (zulip_bots does), so its PUTs queue
      // behind each other; each is timed from its own start.
      const put = storageWrites.then(() => call('PUT', `${base}/bot_storage`, botAuth, { storage: JSON.stringify({ count: String(i), [`k${i % 50}`]: `v${i}` }) }));
      storageWrites = put.then(() => undefined, () => undefined);
      const { ms } = await put;
      puts.push(ms);
      return ms;
    }),
  ]);

  const result = {
    when: new Date().toISOString(),
    machine: `${os.cpus().length} cpus, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    seconds: SECONDS,
    poll_votes: { voters: VOTERS, options: 5, ...summary(votes), target_p99_ms: 20, floor_health_live: summary(voteFloor) },
    bot_storage_put: { rate_per_s: BOT_RATE, ...summary(puts), target_p99_ms: 20, floor_health_live: summary(botFloor) },
    bot_sends: summary(botSends),
    other_sends_alone: { rate_per_s: OTHERS_RATE, ...summary(alone) },
    other_sends_with_bot: { rate_per_s: OTHERS_RATE, ...summary(withBot) },
    failed_requests: errors,
    first_failure: firstError || null,
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${writeResult('widgets', result)}`);
} finally {
  await server.close();
  await database.drop();
}
