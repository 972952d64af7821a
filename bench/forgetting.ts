/**
 * Cost of crypto-shredding on real PostgreSQL. Writes bench/results/forgetting.json.
 *
 *   npx tsx bench/forgetting.ts   (BENCH_DATABASE_URL, BENCH_NATS_URL; BENCH_SECONDS per send round,
 *                                  default 5; BENCH_ROUNDS send rounds per mode, default 6;
 *                                  BENCH_SHRED messages to shred by retention, default 100,000;
 *                                  BENCH_PARTS=send: part 1 only, =http: its HTTP half only;
 *                                  BENCH_HTTP=0: skip the HTTP half; BENCH_SERVER_NODE_ARGS, e.g.
 *                                  "--cpu-prof --cpu-prof-dir=/tmp/p": prints each round's window)
 *
 * 1. Send throughput and p99, 8 senders, encryption on against off, in alternating rounds whose
 *    order is reversed every other round, after a warm-up of each mode in turns:
 *    a. as a client sees it (our standard, bench/forgetting-http.ts): POST /messages over HTTP to
 *       two server processes on PostgreSQL + NATS, each with its own database: the production build
 *       (encryption always on) and bench/plaintext-server.ts, the same code bundled the same way
 *       with the store's sealing switched off after start-up. Production has no switch to write
 *       plaintext and gets none: the floor is a benchmark-only entry point that nothing in src/
 *       imports and the build does not compile (see its header). Per round: msg/s, p50/p99, and the
 *       CPU per send of the server process and of its database connections.
 *    b. through the message service in this process (the figure reported before; off = the same
 *       store with its crypto unset), with this process's CPU per send.
 *    Each reports the means and the median of the rounds' paired slowdowns (on against the off turn
 *    beside it): on a shared machine one slow round moves a mean, the paired median much less.
 * 2. Rebuild events/s of the whole log with encryption on (every MessageSent opened again), beside
 *    its floor: the same events (opened) appended in the same order to a second database with
 *    encryption off, rebuilt in alternation with the first.
 * 3. BENCH_SHRED old messages (appended through the store, sealed) shredded by the retention job,
 *    while one sender keeps sending: the job's time and the worst send latency meanwhile, beside
 *    the same sender's latencies alone for BENCH_SECONDS just before.
 */
import { randomUUID, randomBytes } from 'node:crypto';
import os from 'node:os';
import { loadConfig } from '../src/config.js';
import { createPlatform } from '../src/platform.js';
import { allProjections } from '../projections/index.js';
import { ensureOrganization } from '../src/services/bootstrap.js';
import { createUser } from '../src/services/users.js';
import { subscribe } from '../src/services/channels.js';
import { sendMessage, messageStream } from '../src/services/messages.js';
import { getRealm } from '../src/read/realm.js';
import { Role } from '../src/domain/roles.js';
import { applyRetention } from '../src/services/retention.js';
import { EventCrypto } from '../src/eventstore/crypto/index.js';
import { freshDatabase, percentile, throughput, writeResult } from './util.js';
import { sendOverHttp } from './forgetting-http.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SHRED = Number(process.env.BENCH_SHRED ?? 100_000);
const SENDERS = 8;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
/** `send`: only part 1 (the send comparison), for iterating on the cost of sealing; `http`: only its HTTP half. */
const SEND_ONLY = process.env.BENCH_PARTS === 'send';
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const httpRounds = process.env.BENCH_HTTP === '0' ? undefined : await sendOverHttp(SENDERS, SECONDS, ROUNDS, (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean));
/**
 * Means over the rounds, and the median of each round's own slowdown (on against the off turn next
 * to it): on a shared machine one slow round moves the means, and the paired figure much less.
 */
const summarize = (rounds: Record<'on' | 'off', Array<{ perSecond: number }>>) => {
  const on = mean(rounds.on.map((x) => x.perSecond));
  const off = mean(rounds.off.map((x) => x.perSecond));
  const paired = rounds.on.map((x, i) => 1 - x.perSecond / rounds.off[i]!.perSecond).sort((a, b) => a - b);
  const median = (paired[(paired.length - 1) >> 1]! + paired[paired.length >> 1]!) / 2;
  return { on, off, slowdown: 1 - on / off, medianRoundSlowdown: median };
};
const http = httpRounds && summarize(httpRounds);
if (httpRounds && http) {
  const { on, off, slowdown, medianRoundSlowdown } = http;
  const cpu = (mode: 'on' | 'off', key: 'serverCpuMs' | 'databaseCpuMs') => mean(httpRounds[mode].map((x) => x[key])).toFixed(3);
  console.log(`http send mean: on ${Math.round(on)} msg/s, off ${Math.round(off)}, ${(100 * slowdown).toFixed(1)}% slower (median of rounds ${(100 * medianRoundSlowdown).toFixed(1)}%); server CPU/send on ${cpu('on', 'serverCpuMs')} off ${cpu('off', 'serverCpuMs')} ms; database on ${cpu('on', 'databaseCpuMs')} off ${cpu('off', 'databaseCpuMs')}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

if (process.env.BENCH_PARTS === 'http') process.exit(0);

const database = await freshDatabase('bench_forgetting');
const config = {
  ...loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' }),
  databaseUrl: database.url,
  natsUrl: undefined,
  dataKeySecret: randomBytes(32).toString('hex'),
  forgettingIntervalSeconds: 0,
};
const platform = await createPlatform(config, { projections: allProjections });
const crypto = platform.store.crypto!;
try {
  const { db, store } = platform;
  const { realmId } = await ensureOrganization(platform, { writeZuliprc: false });
  const meta = (actorId: number | null, now = new Date()) => ({ actorId, realmId, client: 'bench', requestId: randomUUID(), now });
  const owner = await db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const userIds = [owner.id];
  for (let i = 1; i < SENDERS; i++) userIds.push((await createUser(platform, meta(owner.id), { email: `u${i}@example.com`, full_name: `U ${i}`, role: Role.MEMBER })).user_id);
  let realm = (await getRealm(db, realmId))!;
  await subscribe(platform, meta(owner.id), owner, realm, { subscriptions: [{ name: 'bench' }], principals: userIds });
  const stream = await db.selectFrom('streams').select('id').where('name', '=', 'bench').executeTakeFirstOrThrow();
  const users = await db.selectFrom('users').selectAll().where('id', 'in', userIds).orderBy('id').execute();
  const send = (w: number, i: number) =>
    sendMessage(platform, meta(users[w]!.id), users[w]!, realm, { type: 'stream', to: stream.id, topic: `topic ${w % 3}`, content: `message ${i} from ${w}: some words of a usual length, with **markdown**` }).then(() => undefined);

  // 1. Send: rounds alternate so drift of the machine hits both alike.
  // Warm-up in both modes: the first round measured used to be the slowest, and it was always 'on'.
  for (const mode of ['on', 'off'] as const) {
    platform.store.crypto = mode === 'on' ? crypto : undefined;
    await throughput(SENDERS, 3_000, send);
  }
  const rounds: Record<'on' | 'off', Array<{ perSecond: number; p99: number; cpuMs: number }>> = { on: [], off: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const mode of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      platform.store.crypto = mode === 'on' ? crypto : undefined;
      const cpu = process.cpuUsage();
      const startedUs = process.hrtime.bigint() / 1000n;
      const result = await throughput(SENDERS, SECONDS * 1000, send);
      const used = process.cpuUsage(cpu);
      // CPU per send (this process: clients, server and folding alike) moves less with the machine's load than msg/s.
      const cpuMs = Number(((used.user + used.system) / 1000 / result.ops).toFixed(3));
      rounds[mode].push({ perSecond: result.perSecond, p99: percentile(result.latencies, 99), cpuMs });
      // The monotonic clock --cpu-prof samples carry: a profile can be cut to the rounds of one mode.
      if (process.execArgv.includes('--cpu-prof')) console.log(`window ${mode} ${startedUs} ${process.hrtime.bigint() / 1000n} us`);
      console.log(`send, encryption ${mode}: ${result.ops} sends, ${result.perSecond} msg/s, p99 ${percentile(result.latencies, 99)} ms, ${cpuMs} ms CPU/send, load ${os.loadavg()[0]!.toFixed(2)}`);
    }
  }
  platform.store.crypto = crypto;
  const { on: sendOn, off: sendOff, medianRoundSlowdown: inProcessMedian } = summarize(rounds);
  const cpuOn = mean(rounds.on.map((x) => x.cpuMs));
  const cpuOff = mean(rounds.off.map((x) => x.cpuMs));
  console.log(`send mean: on ${Math.round(sendOn)} msg/s, off ${Math.round(sendOff)} msg/s, ${(100 * (1 - sendOn / sendOff)).toFixed(1)}% slower (median of rounds ${(100 * inProcessMedian).toFixed(1)}%); CPU/send on ${cpuOn.toFixed(3)} ms, off ${cpuOff.toFixed(3)} ms; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (SEND_ONLY) process.exit(0);

  // 3 (set-up). Old messages to shred: MessageSent events as the service writes them, 400 days old.
  const template = (await store.readStream(messageStream((await db.selectFrom('messages').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow()).id)))[0]!.data;
  const oldSeconds = Math.floor(Date.now() / 1000) - 400 * 86_400;
  for (let done = 0; done < SHRED; done += 1_000) {
    const appends = [];
    for (let i = 0; i < Math.min(1_000, SHRED - done); i++) {
      const id = await platform.commands.nextId('message_id_seq');
      appends.push({ streamId: messageStream(id), expectedVersion: -1, events: [{ type: 'MessageSent', data: { ...template, message_id: id, date_sent: oldSeconds, content: `old ${id}`, rendered_content: `<p>old ${id}</p>`, sender_queue_id: null, local_id: null } }] });
    }
    const events = await store.append(appends, { actor_id: owner.id, realm_id: realmId, client: 'bench', request_id: randomUUID(), time: new Date().toISOString() });
    await platform.projections.waitFor(events[events.length - 1]!.position, 120_000);
  }
  console.log(`appended ${SHRED} old messages`);

  // 2. Rebuild with encryption on, alternating with its floor: the same log stored in plaintext.
  const head = (await store.head()).position;
  let rebuildResult: Record<string, unknown>;
  const floorDatabase = await freshDatabase('bench_forgetting_floor');
  const floor = await createPlatform({ ...config, databaseUrl: floorDatabase.url, dataKeySecret: randomBytes(32).toString('hex') }, { projections: allProjections });
  try {
    floor.store.crypto = undefined;
    const floorHead = (await floor.store.head()).position;
    for (let after = 0; ; ) {
      const page = await store.readAll(after, 5_000);
      if (page.length === 0) break;
      // In log order: appends queue in call order and commit in that order (group commit).
      const appended = page.map((event) => floor.store.append([{ streamId: event.stream_id, expectedVersion: undefined, events: [{ type: event.type, data: event.data, schemaVersion: event.schema_version }] }], event.metadata));
      await Promise.all(appended);
      after = page[page.length - 1]!.position;
    }
    await floor.projections.waitFor((await floor.store.head()).position, 300_000);
    const floorEvents = (await floor.store.head()).position - floorHead;
    const rebuilds: Record<'on' | 'off', number[]> = { on: [], off: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of ['on', 'off'] as const) {
        const target = mode === 'on' ? platform : floor;
        const events = (await target.store.head()).position;
        const started = performance.now();
        await target.projections.rebuild();
        const perSecond = Math.round(events / ((performance.now() - started) / 1000));
        rebuilds[mode].push(perSecond);
        console.log(`rebuild, encryption ${mode}: ${events} events, ${perSecond} events/s`);
      }
    }
    rebuildResult = { events: head, floor_events: floorEvents + floorHead, rounds: rebuilds, events_per_second: Math.round(mean(rebuilds.on)), floor_events_per_second: Math.round(mean(rebuilds.off)), ratio_to_floor: Number((mean(rebuilds.on) / mean(rebuilds.off)).toFixed(3)), target_min: 20_000 };
  } finally {
    await floor.close();
    await floorDatabase.drop();
  }

  // 2b. What opening costs a reader: every event of the log opened again (keys cached, views not).
  const stored = [];
  for (let after = 0; ; ) {
    const page = await store.readAllStored(after, 5_000);
    if (page.length === 0) break;
    stored.push(...page);
    after = page[page.length - 1]!.position;
  }
  const reader = new EventCrypto(crypto.keys);
  const openStarted = performance.now();
  await reader.openEvents(stored);
  const openMicros = ((performance.now() - openStarted) * 1000) / stored.length;
  console.log(`opening: ${openMicros.toFixed(1)} µs per event (${stored.length} events)`);

  // 3. Retention: the organization keeps 365 days; one sender keeps sending meanwhile.
  realm = { ...realm, properties: { ...(realm.properties as object), message_retention_days: 365 } };
  // Its floor: the same sender alone, just before.
  const floorLatencies: number[] = [];
  for (let i = 0, started = performance.now(); performance.now() - started < SECONDS * 1000; i++) {
    const t0 = performance.now();
    await send(0, i);
    floorLatencies.push(performance.now() - t0);
  }
  console.log(`one sender without shredding: ${floorLatencies.length} sends, max ${Math.max(...floorLatencies).toFixed(1)} ms, p99 ${percentile(floorLatencies, 99)} ms`);
  let shredding = true;
  const sendLatencies: number[] = [];
  const sender = (async () => {
    for (let i = 0; shredding; i++) {
      const t0 = performance.now();
      await send(0, i);
      sendLatencies.push(performance.now() - t0);
    }
  })();
  const shredStarted = performance.now();
  const shredded = await applyRetention(platform, realm, new Date());
  const shredSeconds = (performance.now() - shredStarted) / 1000;
  shredding = false;
  await sender;
  console.log(`retention shredded ${shredded} messages in ${shredSeconds.toFixed(1)} s; sends meanwhile: ${sendLatencies.length}, max ${Math.max(...sendLatencies).toFixed(1)} ms, p99 ${percentile(sendLatencies, 99)} ms`);

  const file = writeResult('forgetting', {
    benchmark: 'forgetting',
    date: new Date().toISOString(),
    scale: { send_seconds_per_round: SECONDS, shred_messages: SHRED, ...(SHRED < 100_000 ? { note: 'short run: BENCH_SHRED=100000 is the target size' } : {}) },
    machine: { cpus: (await import('node:os')).cpus().length, loadavg: (await import('node:os')).loadavg() },
    ...(http ? { send_http: { senders: SENDERS, seconds_per_round: SECONDS, rounds: httpRounds, encryption_on_per_second: Math.round(http.on), encryption_off_per_second: Math.round(http.off), slowdown: Number(http.slowdown.toFixed(3)), median_round_slowdown: Number(http.medianRoundSlowdown.toFixed(3)), target_slowdown_max: 0.1 } } : {}),
    send: { senders: SENDERS, seconds_per_round: SECONDS, rounds, encryption_on_per_second: Math.round(sendOn), encryption_off_per_second: Math.round(sendOff), slowdown: Number((1 - sendOn / sendOff).toFixed(3)), median_round_slowdown: Number(inProcessMedian.toFixed(3)), cpu_ms_per_send_on: Number(cpuOn.toFixed(3)), cpu_ms_per_send_off: Number(cpuOff.toFixed(3)), target_slowdown_max: 0.1 },
    rebuild: { ...rebuildResult, open_microseconds_per_event: Number(openMicros.toFixed(2)), open_ceiling_events_per_second: Math.round(1e6 / openMicros) },
    retention_shred: { messages: shredded, seconds: Number(shredSeconds.toFixed(2)), target_seconds_max: 30, sends_meanwhile: sendLatencies.length, send_latency_max_ms: Number(Math.max(...sendLatencies).toFixed(1)), send_latency_p99_ms: percentile(sendLatencies, 99),
      floor_sends_per_second: Number((floorLatencies.length / SECONDS).toFixed(1)), floor_send_latency_max_ms: Number(Math.max(...floorLatencies).toFixed(1)), floor_send_latency_p99_ms: percentile(floorLatencies, 99), target_send_block_max_ms: 100 },
  });
  console.log(`written to ${file}`);
} finally {
  await platform.close();
  await database.drop();
}
