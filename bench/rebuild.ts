/**
 * `rebuild` speed over a log of BENCH_EVENTS (default 1,000,000) events on real PostgreSQL, with
 * the checksums of every read table compared before and after. Writes bench/results/rebuild.json.
 *
 *   npx tsx bench/rebuild.ts      (BENCH_EVENTS, BENCH_DATABASE_URL; BENCH_KEEP=1 keeps the database,
 *                                  BENCH_REUSE=<its url> times the rebuild again on that log,
 *                                  BENCH_PROFILE=1 prints the time per projection and event type)
 *
 * The realm, users, channels and a first message to each conversation go through the real
 * services. The bulk of the log is then appended through EventStore.append, one request per event
 * (the store groups them into batches as it does for live traffic), with the payloads the
 * services write: mostly MessageSent to a few channels and DMs, plus reactions, flag changes,
 * content edits and subscription changes. The live projection workers fold it as it is appended
 * (the "before" tables); then ProjectionRunner.rebuild refolds everything in one transaction.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createPlatform } from '../src/platform.js';
import { allProjections } from '../projections/index.js';
import { ensureOrganization } from '../src/services/bootstrap.js';
import { createUser } from '../src/services/users.js';
import { subscribe } from '../src/services/channels.js';
import { sendMessage, messageStream } from '../src/services/messages.js';
import { realmRenderData } from '../src/services/render-context.js';
import { renderMarkdown } from '../src/markdown/index.js';
import { getRealm } from '../src/read/realm.js';
import { tableChecksums } from '../src/read/checksums.js';
import { Role } from '../src/domain/roles.js';
import type { EventMetadata, StoredEvent, StreamAppend } from '../src/eventstore/types.js';
import type { Projection, Trx } from '../src/projections-api.js';
import type { MessageSent } from '../src/domain/messages/events.js';
import { freshDatabase, writeResult } from './util.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const USERS = 50;
const CHANNELS = 5;
const TARGET = 20_000;
/** Share of each kind of event in the generated log (the rest of 1 is MessageSent). */
const MIX = { ReactionAdded: 0.06, ReactionRemoved: 0.01, MessageFlagsChanged: 0.05, MessageEdited: 0.02, Subscription: 0.01 };

// A seeded generator: the same log every run.
let seed = 42;
const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

// BENCH_REUSE=<url of a database BENCH_KEEP left>: time the rebuild again on that log, without building it.
const reuse = process.env.BENCH_REUSE;
const database = reuse ? { url: reuse, drop: async () => undefined } : await freshDatabase('bench_rebuild');
const config = { ...loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' }), databaseUrl: database.url, natsUrl: undefined };
/** BENCH_PROFILE=1: time spent per projection and event type (single events and runs), printed after the rebuild. */
const profile = new Map<string, { ms: number; events: number; calls: number }>();
const timed = <A extends unknown[]>(key: (...args: A) => string, count: (...args: A) => number, fn: (...args: A) => Promise<boolean | void>) =>
  async (...args: A) => {
    const t0 = performance.now();
    try {
      return await fn(...args);
    } finally {
      const k = key(...args);
      const entry = profile.get(k) ?? { ms: 0, events: 0, calls: 0 };
      entry.ms += performance.now() - t0;
      entry.events += count(...args);
      entry.calls += 1;
      profile.set(k, entry);
    }
  };
const projections: readonly Projection[] = process.env.BENCH_PROFILE
  ? allProjections.map((p) => ({
      ...p,
      apply: timed<[Trx, StoredEvent]>((_t, e) => `${p.name} ${e.type}`, () => 1, p.apply),
      applyRun: p.applyRun && timed<[Trx, readonly StoredEvent[]]>((_t, es) => `${p.name} ${es[0]!.type} (runs)`, (_t, es) => es.length, p.applyRun),
    }))
  : allProjections;
const platform = await createPlatform(config, { projections });
/** What the log holds, by event type (for a reused log, whose generator counts are gone). */
async function eventMix(db: typeof platform.db): Promise<Record<string, number>> {
  const rows = await db.selectFrom('events').select(['type', (eb) => eb.fn.countAll<string>().as('n')]).groupBy('type').orderBy('n', 'desc').execute();
  return Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
}

/** Builds the log (setup through the services, then the generated events) and waits for the live fold. */
async function buildLog() {
  const { db, store } = platform;
  const { realmId } = await ensureOrganization(platform, { writeZuliprc: false });
  const meta = (actorId: number | null) => ({ actorId, realmId, client: 'bench', requestId: randomUUID(), now: new Date() });
  const owner = await db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  console.log(`setup: ${USERS} users, ${CHANNELS + 1} channels, first messages through the services`);
  const userIds: number[] = [owner.id];
  for (let i = 1; i < USERS; i++) {
    const created = await createUser(platform, meta(owner.id), { email: `user${i}@example.com`, full_name: `User ${i}`, role: Role.MEMBER });
    userIds.push(created.user_id);
  }
  const realm = (await getRealm(db, realmId))!;
  const names = Array.from({ length: CHANNELS + 1 }, (_, i) => `channel ${i}`);
  await subscribe(platform, meta(owner.id), owner, realm, { subscriptions: names.slice(0, CHANNELS).map((name) => ({ name })), principals: userIds });
  // The last channel is where subscriptions come and go.
  await subscribe(platform, meta(owner.id), owner, realm, { subscriptions: [{ name: names[CHANNELS]! }], principals: [owner.id] });
  const streams = await db.selectFrom('streams').select(['id', 'name']).where('name', 'in', names).orderBy('id').execute();
  const channelIds = streams.filter((s) => s.name !== names[CHANNELS]).map((s) => s.id);
  const churnChannel = streams.find((s) => s.name === names[CHANNELS])!.id;
  const userRow = (id: number) => db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  for (const id of channelIds) await sendMessage(platform, meta(owner.id), owner, realm, { type: 'stream', to: id, topic: 'welcome', content: 'hello' });
  // A few DM conversations: pairs of users.
  const dmPairs: Array<[number, number]> = [];
  for (let i = 1; i + 1 < 21; i += 2) dmPairs.push([userIds[i]!, userIds[i + 1]!]);
  for (const [a, b] of dmPairs) {
    await sendMessage(platform, meta(a), await userRow(a), realm, { type: 'private', to: [b], content: 'hi' });
    await sendMessage(platform, meta(b), await userRow(b), realm, { type: 'private', to: [a], content: 'hello' });
  }
  const recipients = new Map((await db.selectFrom('message_recipients').select(['id', 'key']).execute()).map((r) => [r.key, r.id]));

  // Contents rendered once by the real renderer, then reused.
  const renderData = await realmRenderData(platform, realmId);
  const contents = Array.from({ length: 200 }, (_, i) => {
    const content = i % 20 === 0 ? `**Status ${i}**: see https://example.com/issue/${i}` : `message number ${i}, with *some* markdown and a \`code span\` ${'lorem ipsum '.repeat(i % 7)}`;
    return { content, rendered: renderMarkdown(content, renderData.context).html };
  });

  const head0 = (await store.head()).position;
  // A block of ids reserved from the sequence, not max(messages.id): a message the services sent
  // (a welcome message, say) may not be folded yet on a busy machine, and its id would be reused.
  const { rows: [reserved] } = await sql<{ first: number }>`SELECT setval('message_id_seq', (SELECT last_value FROM message_id_seq) + ${EVENTS}) - ${EVENTS} AS first`.execute(db);
  const firstId = Number(reserved!.first);
  let nextMessageId = firstId + 1;
  const sentThisWave: typeof recent = [];
  const recent: Array<{ id: number; sender: number; stream: number | null; dm: number[]; content: string; rendered: string; topic: string }> = [];
  const reactions: Array<{ message: number; user: number; emoji: [string, string] }> = [];
  const reacted = new Set<string>();
  const subscribedToChurn = new Set<number>([owner.id]);
  const mix: Record<string, number> = {};
  const emoji: Array<[string, string]> = [['thumbs_up', '1f44d'], ['heart', '2764'], ['tada', '1f389'], ['smile', '1f642'], ['eyes', '1f440']];

  /** One generated request: its appends and the acting user. */
  function nextRequest(): { appends: StreamAppend[]; actor: number } {
    const r = rand();
    let edge = MIX.ReactionAdded;
    if (r < edge && recent.length > 0) {
      const m = pick(recent.slice(-200));
      const user = pick(userIds);
      const e = pick(emoji);
      const key = `${m.id}:${user}:${e[1]}`;
      if (!reacted.has(key)) {
        reacted.add(key);
        reactions.push({ message: m.id, user, emoji: e });
        mix.ReactionAdded = (mix.ReactionAdded ?? 0) + 1;
        return { actor: user, appends: [{ streamId: messageStream(m.id), expectedVersion: undefined, events: [{ type: 'ReactionAdded', data: { message_id: m.id, user_id: user, emoji_name: e[0], emoji_code: e[1], reaction_type: 'unicode_emoji' } }] }] };
      }
    }
    if (r < (edge += MIX.ReactionRemoved) && reactions.length > 0) {
      const { message, user, emoji: e } = reactions.splice(Math.floor(rand() * reactions.length), 1)[0]!;
      reacted.delete(`${message}:${user}:${e[1]}`);
      mix.ReactionRemoved = (mix.ReactionRemoved ?? 0) + 1;
      return { actor: user, appends: [{ streamId: messageStream(message), expectedVersion: undefined, events: [{ type: 'ReactionRemoved', data: { message_id: message, user_id: user, emoji_name: e[0], emoji_code: e[1], reaction_type: 'unicode_emoji' } }] }] };
    }
    if (r < (edge += MIX.MessageFlagsChanged) && recent.length > 0) {
      // Mostly reading what arrived lately; sometimes a star.
      const user = pick(userIds);
      const received = recent.slice(-30).filter((m) => m.sender !== user && (m.stream !== null || m.dm.includes(user)));
      const star = rand() < 0.15;
      const ids = star ? [pick(recent).id] : received.map((m) => m.id);
      if (ids.length > 0) {
        mix.MessageFlagsChanged = (mix.MessageFlagsChanged ?? 0) + 1;
        return { actor: user, appends: [{ streamId: `message-flags-${user}`, expectedVersion: undefined, events: [{ type: 'MessageFlagsChanged', data: { user_id: user, op: 'add', flag: star ? 'starred' : 'read', message_ids: [...new Set(ids)].sort((a, b) => a - b), all: false, read_through: null, message_details: null } }] }] };
      }
    }
    if (r < (edge += MIX.MessageEdited) && recent.length > 0) {
      const m = pick(recent.slice(-50));
      const next = pick(contents);
      mix.MessageEdited = (mix.MessageEdited ?? 0) + 1;
      const data = {
        message_id: m.id, message_ids: [m.id], realm_id: realmId, user_id: m.sender, edit_timestamp: Math.floor(Date.now() / 1000), stream_id: m.stream,
        orig_topic: m.topic, content: next.content, rendered_content: next.rendered, prev_content: m.content, prev_rendered_content: m.rendered,
        is_me_message: false, has_link: next.content.includes('https://'), has_image: false, has_attachment: false, mentioned_user_ids: [], prev_mentioned_user_ids: [],
        stream_wildcard: false, topic_wildcard: false, topic_wildcard_user_ids: [], attachment_paths: [], new_topic: null, new_stream_id: null,
        propagate_mode: 'change_one', dm_user_ids: m.dm,
      };
      m.content = next.content;
      m.rendered = next.rendered;
      return { actor: m.sender, appends: [{ streamId: messageStream(m.id), expectedVersion: undefined, events: [{ type: 'MessageEdited', data }] }] };
    }
    if (r < (edge += MIX.Subscription)) {
      const user = pick(userIds.slice(1));
      const leaving = subscribedToChurn.has(user);
      if (leaving) subscribedToChurn.delete(user);
      else subscribedToChurn.add(user);
      const type = leaving ? 'UserUnsubscribed' : 'UserSubscribed';
      mix[type] = (mix[type] ?? 0) + 1;
      const data = leaving ? { stream_id: churnChannel, user_id: user } : { stream_id: churnChannel, user_id: user, color: '#76ce90' };
      return { actor: user, appends: [{ streamId: `subscription-${churnChannel}-${user}`, expectedVersion: undefined, events: [{ type, data }] }] };
    }
    // A message: nine in ten to a channel, the rest a DM; now and then a mention.
    const id = nextMessageId++;
    const text = pick(contents);
    const toChannel = rand() < 0.9;
    const sender = toChannel ? pick(userIds) : 0;
    const pair = toChannel ? undefined : pick(dmPairs);
    const from = pair ? pair[rand() < 0.5 ? 0 : 1] : sender;
    const dm = pair ? [...pair].sort((a, b) => a - b) : [];
    const stream = toChannel ? pick(channelIds) : null;
    const topic = toChannel ? `topic ${Math.floor(rand() * 20)}` : '';
    const mentioned = toChannel && rand() < 0.05 ? [pick(userIds.filter((u) => u !== from))] : [];
    const other = pair ? (pair[0] === from ? pair[1] : pair[0]) : 0;
    const key = toChannel ? `stream:${stream}` : `user:${other}`;
    const data: MessageSent['data'] = {
      message_id: id, realm_id: realmId, sender_id: from, stream_id: stream, topic, recipient_id: recipients.get(key)!, recipient_key: key,
      dm_user_ids: dm, content: text.content, rendered_content: text.rendered, client: 'website', date_sent: Math.floor(Date.now() / 1000),
      is_me_message: false, has_link: text.content.includes('https://'), has_image: false, has_attachment: false, mentioned_user_ids: mentioned,
      stream_wildcard: false, topic_wildcard: false, topic_wildcard_user_ids: [], alerted_user_ids: [], read_by_sender: true, attachment_paths: [],
      sender_queue_id: null, local_id: null,
    };
    sentThisWave.push({ id, sender: from, stream, dm, content: text.content, rendered: text.rendered, topic });
    mix.MessageSent = (mix.MessageSent ?? 0) + 1;
    return { actor: from, appends: [{ streamId: messageStream(id), expectedVersion: -1, events: [{ type: 'MessageSent', data }] }] };
  }

  const toAppend = EVENTS - head0;
  console.log(`appending ${toAppend} events (the live workers fold them as they come)`);
  const appendStarted = performance.now();
  const WAVE = 4_000;
  for (let done = 0; done < toAppend;) {
    const wave: Array<Promise<unknown>> = [];
    for (let i = 0; i < WAVE && done < toAppend; i++, done++) {
      const { appends, actor } = nextRequest();
      const metadata: EventMetadata = { actor_id: actor, realm_id: realmId, client: 'website', request_id: randomUUID(), time: new Date().toISOString() };
      wave.push(store.append(appends, metadata));
    }
    await Promise.all(wave);
    // Reactions and edits name only messages of earlier waves: a sealed message waits for its data
    // key before it queues, so a reaction to it in the same wave could reach the log first.
    recent.push(...sentThisWave.splice(0));
    if (recent.length > 1000) recent.splice(0, recent.length - 500);
    if (process.env.BENCH_VERBOSE || done % 100_000 < WAVE) console.log(`  ${done}/${toAppend} appended, read tables at ${platform.projectedPosition()}${platform.projections.lastError ? ` (projection error: ${String(platform.projections.lastError)})` : ""}`);
  }
  // The message id sequence moves past the ids the log now holds, as sending would have moved it.
  await sql`SELECT setval('message_id_seq', GREATEST(${nextMessageId - 1}, (SELECT last_value FROM message_id_seq)))`.execute(db);
  const head = (await store.head()).position;
  const appendSeconds = (performance.now() - appendStarted) / 1000;
  if (!(await platform.waitForProjections(head, 600_000))) throw new Error(`live projections did not reach the head: ${String(platform.projections.lastError)}`);
  const liveSeconds = (performance.now() - appendStarted) / 1000;
  console.log(`log: ${head} events; appended in ${appendSeconds.toFixed(1)} s, folded live by ${liveSeconds.toFixed(1)} s`);
  return { head0, mix, appendSeconds, liveSeconds };
}

try {
  const { db } = platform;
  const built = reuse ? undefined : await buildLog();
  const head = (await platform.store.head()).position;

  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(db, tables);
  console.log('rebuilding');
  profile.clear();
  const started = performance.now();
  let lastReport = started;
  const reached = await platform.projections.rebuild((position) => {
    if (performance.now() - lastReport > 5_000) {
      lastReport = performance.now();
      console.log(`  rebuild at ${position}/${head} (${Math.round(position / ((lastReport - started) / 1000))} events/s)`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  for (const [k, v] of [...profile].sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) {
    console.log(`  ${k.padEnd(48)} ${(v.ms / 1000).toFixed(2).padStart(8)} s  ${v.events} events in ${v.calls} calls`);
  }
  const after = await tableChecksums(db, tables);
  const identical = JSON.stringify(before) === JSON.stringify(after);
  const eventsPerSecond = Math.round(reached / seconds);
  console.log(`rebuilt ${reached} events in ${seconds.toFixed(1)} s: ${eventsPerSecond} events/s; checksums ${identical ? 'identical' : 'DIFFERENT'}`);
  const file = writeResult('rebuild', {
    benchmark: 'rebuild',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(1)) },
    // BENCH_NOTE: what to know about this run (a shared machine, a partial log).
    note: process.env.BENCH_NOTE,
    target: { events_per_s: `>= ${TARGET}`, events: 1_000_000 },
    events: reached,
    rebuild_seconds: Number(seconds.toFixed(2)),
    events_per_s: eventsPerSecond,
    meets_target: eventsPerSecond >= TARGET && identical,
    checksums_identical: identical,
    log_built_seconds: built && Number(built.appendSeconds.toFixed(1)),
    live_fold_done_seconds: built && Number(built.liveSeconds.toFixed(1)),
    event_mix: built ? Object.fromEntries(Object.entries(built.mix).sort((a, b) => b[1] - a[1])) : await eventMix(db),
    setup_events_through_services: built?.head0,
    rows: Object.fromEntries(after.filter((s) => s.rows > 0).map((s) => [s.table, s.rows])),
  });
  console.log(`written to ${file}`);
  if (!identical) {
    for (let i = 0; i < before.length; i++) if (JSON.stringify(before[i]) !== JSON.stringify(after[i])) console.log('differs:', before[i], after[i]);
    process.exitCode = 1;
  }
} finally {
  await platform.close();
  // BENCH_KEEP=1 leaves the database for a closer look (its URL is printed).
  if (process.env.BENCH_KEEP || reuse) console.log(`kept ${database.url}`);
  else await database.drop();
}
