/**
 * The audit console on a log of BENCH_EVENTS (default 1,000,000) events on real PostgreSQL, over
 * a real port, timed from request to last byte. Writes bench/results/audit-console.json. Not run by tests.
 *
 *   npx tsx bench/audit-console.ts   (BENCH_EVENTS, BENCH_DATABASE_URL; BENCH_KEEP=1 keeps the database,
 *                                     BENCH_REUSE=<its url> times the pages again on that log)
 *
 * The organization, its users and channels go through the real services. The bulk of the log is
 * then written with plain multi-row INSERTs (as `replay` copies a log), each row hashed with the
 * store's own chainHash, so `verify` passes over the whole log: mostly MessageSent to a few
 * channels, plus content edits, moves between channels, reactions, flag changes and deletions,
 * spread over the 30 days after the setup (metadata.time). The console reads only the log (and the names of users and
 * channels), so the projections' checkpoints are set to the head instead of folding the bulk.
 * Message contents are written unsealed: the timings leave out decrypting them (a page opens at
 * most a few hundred).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { buildServer, type ServerInstance } from '../src/build-server.js';
import { allProjections } from '../projections/index.js';
import { createUser } from '../src/services/users.js';
import { Role } from '../src/domain/roles.js';
import { APPEND_LOCK_KEY } from '../src/eventstore/event-store.js';
import { chainHash } from '../src/eventstore/hash.js';
import { jsonText } from '../src/eventstore/json-text.js';
import { signSession } from '../src/audit-console/session.js';
import { freshDatabase, percentile, writeResult } from './util.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const USERS = 30;
const BATCH = 1_000;
const RUNS = 30;

let seed = 7;
const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

const reuse = process.env.BENCH_REUSE;
const database = reuse ? { url: reuse, drop: async () => undefined } : await freshDatabase('bench_audit_console');
const config = { ...loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' }), databaseUrl: database.url, natsUrl: undefined };
const result: Record<string, unknown> = { benchmark: 'audit-console', date: new Date().toISOString(), machine: { cpus: os.cpus().length } };

async function setup(): Promise<{ ownerId: number; userIds: number[]; channelIds: number[] }> {
  const server = await buildServer(config, { projections: allProjections, organization: 'full' });
  try {
    const owner = await server.platform.db.selectFrom('users').select('id').where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
    const userIds = [owner.id];
    for (let i = 0; i < USERS; i++) {
      const meta = { actorId: owner.id, realmId: 1, client: 'bench', requestId: randomUUID(), now: new Date() };
      userIds.push((await createUser(server.platform, meta, { email: `bench${i}@example.com`, full_name: `Bench User ${i}`, role: Role.MEMBER })).user_id);
    }
    const channelIds = (await server.platform.db.selectFrom('streams').select('id').where('deactivated', '=', false).execute()).map((s) => s.id);
    return { ownerId: owner.id, userIds, channelIds };
  } finally {
    await server.close();
  }
}

/** Writes the bulk of the log; returns what the timed requests need to name. */
async function bulkLog(server: ServerInstance, userIds: number[], channelIds: number[]) {
  const db = server.platform.db;
  const head = await server.platform.store.head();
  let position = head.position;
  let prev = head.hash;
  const firstMessage = Number((await sql<{ m: number }>`SELECT nextval('message_id_seq')::int8 AS m`.execute(db)).rows[0]!.m) + 1000;
  let nextMessage = firstMessage;
  const live: Array<{ id: number; stream: number; topic: string; sender: number; content: string; version: number }> = [];
  const versions = new Map<string, number>();
  const edited: number[] = [];
  const mix: Record<string, number> = {};
  // After the setup's events (written now), so metadata.time grows with the position as in a real log.
  const start = Date.now() + 60_000;
  const step = (30 * 24 * 3600 * 1000) / EVENTS;
  const started = performance.now();
  const nextVersion = (stream: string) => {
    const v = (versions.get(stream) ?? 0) + 1;
    versions.set(stream, v);
    return v;
  };
  for (let done = 0; done < EVENTS;) {
    const rows: Record<string, unknown>[] = [];
    while (rows.length < BATCH && done < EVENTS) {
      const r = rand();
      const actor = pick(userIds);
      let type: string;
      let streamId: string;
      let data: Record<string, unknown>;
      if (r < 0.05 && live.length > 100) {
        const m = pick(live.slice(-500));
        type = 'ReactionAdded';
        streamId = `message-${m.id}`;
        data = { message_id: m.id, user_id: actor, emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji' };
      } else if (r < 0.10 && live.length > 100) {
        type = 'MessageFlagsChanged';
        streamId = `message-flags-${actor}`;
        data = { user_id: actor, op: 'add', flag: rand() < 0.2 ? 'starred' : 'read', message_ids: live.slice(-5).map((m) => m.id), all: false, read_through: null, message_details: null };
      } else if (r < 0.12 && live.length > 100) {
        const m = pick(live.slice(-2000));
        const move = rand() < 0.2;
        const newStream = move ? pick(channelIds.filter((c) => c !== m.stream)) : null;
        const content = move ? null : `${m.content} (edited)`;
        type = 'MessageEdited';
        streamId = `message-${m.id}`;
        data = {
          message_id: m.id, message_ids: [m.id], realm_id: 1, user_id: actor, edit_timestamp: 0, stream_id: m.stream, orig_topic: m.topic,
          content, rendered_content: content && `<p>${content}</p>`, prev_content: move ? null : m.content, prev_rendered_content: move ? null : `<p>${m.content}</p>`,
          new_topic: null, new_stream_id: newStream, propagate_mode: 'change_one', dm_user_ids: [],
        };
        if (newStream !== null) m.stream = newStream;
        if (content !== null) m.content = content;
        edited.push(m.id);
      } else if (r < 0.125 && live.length > 100) {
        const index = live.length - 1 - Math.floor(rand() * Math.min(live.length, 2000));
        const m = live.splice(index, 1)[0]!;
        type = 'MessagesDeleted';
        streamId = `message-${m.id}`;
        data = { realm_id: 1, message_ids: [m.id], message_type: 'stream', stream_id: m.stream, topic: m.topic, dm_user_ids: [] };
      } else {
        const id = nextMessage++;
        const stream = pick(channelIds);
        const topic = `topic ${Math.floor(rand() * 30)}`;
        const content = `message ${id}: ${'lorem ipsum '.repeat(1 + (id % 8))}`;
        type = 'MessageSent';
        streamId = `message-${id}`;
        data = {
          message_id: id, realm_id: 1, sender_id: actor, stream_id: stream, topic, recipient_id: stream, recipient_key: `stream:${stream}`, dm_user_ids: [],
          content, rendered_content: `<p>${content}</p>`, client: 'bench', date_sent: Math.floor((start + done * step) / 1000), is_me_message: false,
          has_link: false, has_image: false, has_attachment: false, mentioned_user_ids: [], stream_wildcard: false, topic_wildcard: false,
          alerted_user_ids: [], read_by_sender: true, attachment_paths: [], sender_queue_id: null, local_id: null,
        };
        live.push({ id, stream, topic, sender: actor, content, version: 1 });
        if (live.length > 20_000) live.splice(0, 10_000);
      }
      position += 1;
      done += 1;
      mix[type] = (mix[type] ?? 0) + 1;
      const event = {
        position, event_id: randomUUID(), stream_id: streamId, stream_version: nextVersion(streamId), type, schema_version: 1, data,
        metadata: { actor_id: actor, realm_id: 1, client: 'bench', request_id: randomUUID(), time: new Date(start + done * step).toISOString() },
      };
      const hash = chainHash(prev, event);
      prev = hash;
      rows.push({ ...event, data: jsonText(event.data), metadata: jsonText(event.metadata), hash });
    }
    await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})`.execute(trx);
      await trx.insertInto('events').values(rows as never).execute();
    });
    if (done % 100_000 < BATCH) console.log(`bulk: ${done} events (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  // Nothing to fold for the console: its pages read the log itself.
  await sql`UPDATE checkpoints SET position = ${position}`.execute(db);
  await sql`ANALYZE events`.execute(db);
  result.bulk_seconds = Number(((performance.now() - started) / 1000).toFixed(1));
  result.event_mix = mix;
  return { head: position, edited, firstMessage, lastMessage: nextMessage - 1 };
}

async function timed(url: string, cookie: string): Promise<{ ms: number; status: number; bytes: number }> {
  const t0 = performance.now();
  const response = await fetch(url, { headers: { cookie } });
  const body = await response.arrayBuffer();
  return { ms: performance.now() - t0, status: response.status, bytes: body.byteLength };
}

async function series(name: string, urls: () => string, cookie: string, runs = RUNS) {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const r = await timed(urls(), cookie);
    if (r.status !== 200) throw new Error(`${name}: status ${r.status}`);
    times.push(r.ms);
    bytes = r.bytes;
  }
  const summary = { runs, p50_ms: percentile(times, 50), p95_ms: percentile(times, 95), max_ms: percentile(times, 100), last_bytes: bytes };
  console.log(name, JSON.stringify(summary));
  return summary;
}

/** The names a reused log's timed requests need, read back from it. */
async function readBack(server: ServerInstance) {
  const db = server.platform.db;
  const owner = await db.selectFrom('users').select('id').where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const userIds = (await db.selectFrom('users').select('id').where('is_bot', '=', false).execute()).map((u) => u.id);
  const channelIds = (await db.selectFrom('streams').select('id').where('deactivated', '=', false).execute()).map((s) => s.id);
  const sample = await sql<{ id: number }>`SELECT (data->>'message_id')::int AS id FROM events WHERE type = 'MessageEdited' AND position % 7 = 0 LIMIT 2000`.execute(db);
  return { ownerId: owner.id, userIds, channelIds, story: { edited: sample.rows.map((r) => r.id) } };
}

try {
  let server: ServerInstance;
  let ownerId: number;
  let userIds: number[];
  let channelIds: number[];
  let story: { edited: number[] };
  if (reuse) {
    server = await buildServer(config, { projections: allProjections });
    ({ ownerId, userIds, channelIds, story } = await readBack(server));
    result.reused_log = true;
  } else {
    ({ ownerId, userIds, channelIds } = await setup());
    server = await buildServer(config, { projections: allProjections });
    story = await bulkLog(server, userIds, channelIds);
    await server.close();
    server = await buildServer(config, { projections: allProjections });
  }
  await server.fastify.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(server.fastify.server.address() as AddressInfo).port}/audit`;
  const owner = await server.platform.db.selectFrom('users').select(['api_key']).where('id', '=', ownerId).executeTakeFirstOrThrow();
  const cookie = `audit_session=${signSession(ownerId, owner.api_key, Date.now())}`;
  const head = (await server.platform.store.head()).position;
  result.events = head;
  const mid = Math.floor(head / 2);
  const day = new Date(Date.now() + 15 * 24 * 3600 * 1000).toISOString().slice(0, 10);

  await timed(`${base}/log`, cookie); // warm-up
  const first = await series('log first screen', () => `${base}/log`, cookie);
  const filters = [
    () => `type=MessageEdited`,
    () => `actor=${pick(userIds)}`,
    () => `channel=${pick(channelIds)}`,
    () => `message=${pick(story.edited)}`,
    () => `user=${pick(userIds)}`,
    () => `since=${day}T10:00:00&until=${day}T12:00:00`,
    () => `order=position&cursor=${Math.floor(rand() * head)}`,
    () => `type=MessageSent&channel=${pick(channelIds)}&cursor=${mid}`,
  ];
  const filtered = await series('log filtered page', () => `${base}/log?${pick(filters)()}`, cookie, 80);
  const perFilter: Record<string, unknown> = {};
  for (const filter of filters) perFilter[filter().replace(/=\d+/g, '=N').replace(/\d{4}-\d{2}-\d{2}/g, 'DAY')] = await series(`  ${filter()}`, () => `${base}/log?${filter()}`, cookie, 10);
  const chartAll = await series('chart, whole log', () => `${base}/chart.svg`, cookie, 5);
  const chartFiltered = await series('chart, filtered', () => `${base}/chart.svg?${pick(filters.slice(0, 6))()}`, cookie, 20);
  const life = await series("message's life", () => `${base}/messages/${pick(story.edited)}`, cookie, 50);
  const travelDirectory = await series('time travel to the middle (channels and members)', () => `${base}/time-travel?at=${mid}`, cookie, 5);
  const travelChannel = await series('time travel to the middle (a channel\'s last 100 messages)', () => `${base}/time-travel?at=${mid}&channel=${pick(channelIds)}`, cookie, 10);
  const travelTime = await series('time travel to a moment (resolving the time first)', () => `${base}/time-travel?at=${day}T12:00:00Z&channel=${pick(channelIds)}`, cookie, 3);
  const exported = await series('export MessageEdited as CSV', () => `${base}/export?type=MessageEdited&format=csv`, cookie, 2);
  const v0 = performance.now();
  const report = await (await import('../src/eventstore/verify.js')).verifyChain(server.platform.db);
  const verifySeconds = (performance.now() - v0) / 1000;
  console.log(`verify: ${report.ok} ${report.checked} events in ${verifySeconds.toFixed(1)} s`);
  Object.assign(result, {
    target: { log_first_screen_p95_ms: '< 200', log_filtered_p95_ms: '< 200', message_life_p95_ms: '< 100', time_travel_middle_s: '< 10' },
    log_first_screen: first,
    log_filtered: filtered,
    log_filtered_each: perFilter,
    chart_whole_log: chartAll,
    chart_filtered: chartFiltered,
    message_life: life,
    time_travel_middle_directory: travelDirectory,
    time_travel_middle_channel: travelChannel,
    time_travel_by_time: travelTime,
    export_message_edited_csv: exported,
    verify: { ok: report.ok, checked: report.checked, seconds: Number(verifySeconds.toFixed(1)), events_per_s: Math.round(report.checked / verifySeconds) },
    meets_target: first.p95_ms < 200 && filtered.p95_ms < 200 && life.p95_ms < 100 && travelChannel.max_ms < 10_000 && travelDirectory.max_ms < 10_000,
  });
  await server.close();
  console.log(`wrote ${writeResult('audit-console', result)}`);
} finally {
  if (process.env.BENCH_KEEP !== '1') await database.drop();
  else console.log(`kept ${database.url}`);
}
