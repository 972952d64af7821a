/**
 * A mixed workload against a server process on PostgreSQL + NATS: BENCH_CLIENTS (500) simulated
 * users for BENCH_SECONDS (60), each looping over a mix of actions (send a channel message, read
 * GET /messages with a channel+topic narrow, add a reaction, edit one of its messages, re-register
 * its event queue) while keeping a long-poll GET /events open on its queue and acknowledging what
 * arrives. Reports per operation: count, throughput, p50/p99 latency and every non-2xx or failed
 * request; and how long a sent message takes to reach the subscribers' long-polls.
 *
 * References, measured in the same run on the same machine:
 *  - the plain fastify + pg ceiling (one INSERT per request), driven by the same number of
 *    closed-loop clients, in a process of its own like the server;
 *  - the bare long-poll floor (bench/floor-server.ts): release as many held requests as there are
 *    clients and time each answer.
 * Writes bench/results/mixed.json.
 *
 * Two phases on the same server with the same clients, BENCH_SECONDS each: paced (each client pauses
 * BENCH_THINK_MS, default 10,000 ms, give or take half, between actions: people reading), then
 * saturated (no pause: what the server sustains; the ceiling ratio uses this one).
 *
 *   npx tsx bench/mixed.ts   (BENCH_SECONDS, BENCH_CLIENTS, BENCH_THINK_MS, BENCH_DATABASE_URL, BENCH_NATS_URL,
 *                             BENCH_SERVER_NODE_ARGS)
 *
 * bench/soak.ts reuses the server start, the setup and the client loops exported here.
 */
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { benchRoot, freshDatabase, percentile, writeResult } from './util.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;

export const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

export interface Reply { status: number; body: any; ms: number }

/**
 * One HTTP request on a kept-alive socket. Never rejects: a connection failure or a timeout is a
 * reply with status 0 and the error text as body, so the caller counts it as an error.
 * A request that failed on a reused socket before any answer (the server closed it while idle) is
 * retried once on a fresh one, as Node's documentation advises.
 */
export function request(port: number, method: string, url: string, auth: string | undefined, body?: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Reply> {
  const started = performance.now();
  const attempt = (retry: boolean): Promise<Reply> => new Promise((resolve) => {
    let settled = false;
    const done = (reply: Omit<Reply, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...reply, ms: performance.now() - started });
    };
    const req = http.request({ host: '127.0.0.1', port, method, path: url, agent, signal: options.signal, headers: {
      ...(auth ? { authorization: auth } : {}),
      ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
    } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (data += d));
      res.on('error', (error) => done({ status: 0, body: String(error) }));
      res.on('end', () => {
        let parsed: unknown = data;
        try { parsed = JSON.parse(data); } catch { /* left as text */ }
        done({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error('timeout')));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (settled) return;
      if (retry && req.reusedSocket && error.code === 'ECONNRESET') {
        settled = true;
        attempt(false).then(resolve);
      } else done({ status: 0, body: error.name === 'AbortError' ? 'aborted' : String(error.message) });
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
  return attempt(true);
}

const form = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

// ---------------------------------------------------------------- server process

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  ownerAuth: string;
  output(): string;
  stop(): Promise<void>;
}

/** A listening port below Linux's ephemeral range, so hundreds of client sockets never collide with it. */
export function freePort(): number {
  return 20_000 + Math.floor(Math.random() * 10_000);
}

/** Spawns a process and waits for "listening on" in its output. */
export async function spawnListening(args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; output(): string }> {
  const child = spawn(process.execPath, args, { cwd: path.resolve(benchRoot, '..'), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer) => {
    output += d;
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (let i = 0; !/listening on/.test(output); i++) {
    if (child.exitCode !== null || i > 900) {
      child.kill('SIGKILL');
      throw new Error(`process did not start:\n${output}`);
    }
    await sleep(100);
  }
  return { child, output: () => output };
}

/** Extra node options for the server process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it. */
const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** src/server.ts on a fresh PostgreSQL database and a JetStream stream of its own; stop() drops both. */
export async function startServer(prefix: string, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  const database = await freshDatabase(prefix);
  const dataDir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  const natsStream = `BENCH_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
  const port = freePort();
  const env = {
    DATABASE_URL: database.url, NATS_URL: natsUrl, NATS_STREAM: natsStream, DATA_DIR: dataDir, PORT: String(port),
    LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', HEARTBEAT_SECONDS: '20',
    // One server process: its CPU and RSS are what the figures report (a cluster's primary does no work).
    WEB_CONCURRENCY: process.env.WEB_CONCURRENCY ?? '1', ...extraEnv,
  };
  let started: Awaited<ReturnType<typeof spawnListening>>;
  try {
    started = await spawnListening([...nodeArgs, '--expose-gc', '--import', 'tsx', '--import', './bench/gc-on-signal.mjs', 'src/server.ts'], env);
  } catch (error) {
    await database.drop().catch(() => undefined);
    throw error;
  }
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  return {
    child: started.child,
    port,
    ownerAuth: basic('owner@example.com', key),
    output: started.output,
    async stop() {
      // A profiled server must exit by itself to write its profile.
      if (nodeArgs.length > 0) {
        started.child.kill('SIGTERM');
        await Promise.race([new Promise((r) => started.child.once('exit', r)), sleep(15_000)]);
      }
      started.child.kill('SIGKILL');
      await new Promise((r) => (started.child.exitCode !== null || started.child.signalCode !== null ? r(undefined) : started.child.once('exit', r)));
      await database.drop().catch((error) => console.error(`could not drop the database: ${String(error)}`));
      rmSync(dataDir, { recursive: true, force: true });
      try {
        const nc = await connect({ servers: natsUrl, timeout: 2_000 });
        const jsm = await nc.jetstreamManager();
        await jsm.streams.delete(natsStream).catch(() => undefined);
        await nc.close();
      } catch (error) {
        console.error(`could not delete the NATS stream ${natsStream}: ${String(error)}`);
      }
    },
  };
}

// ---------------------------------------------------------------- setup through the API

export interface Client {
  index: number;
  userId: number;
  auth: string;
  channels: number[];
  queue?: { id: string; lastId: number };
  pollAbort?: AbortController;
  own: number[];
  reacted: Set<string>;
}

export interface World {
  clients: Client[];
  channelIds: number[];
  /** The last messages sent to each channel, for reactions. */
  recent: Map<number, number[]>;
}

const TOPICS = ['standup', 'design', 'deploys', 'lunch', 'random'];
const EMOJI = ['smile', 'heart', 'tada', 'rocket', 'octopus', 'fire', 'star', 'eyes', 'clap', 'thumbs_up'];

/** Runs `task` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

function must(what: string, r: Reply): any {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

/**
 * Users, channels and subscriptions through the API, as an administrator would: POST /users with a
 * password, POST /fetch_api_key as the user, POST /users/me/subscriptions with principals. Every user
 * is subscribed to two of the channels, so each channel has about 2 * clients / channels subscribers.
 */
export async function setupWorld(server: ServerProcess, clients: number, channels: number): Promise<World> {
  const { port, ownerAuth } = server;
  const list: Client[] = Array.from({ length: clients }, (_, index) => ({ index, userId: 0, auth: '', channels: [], own: [], reacted: new Set() }));
  await pool(list, 8, async (c) => {
    const email = `client${c.index}@example.com`;
    const password = `password-${c.index}-${randomUUID()}`;
    const created = must('POST /users', await request(port, 'POST', '/api/v1/users', ownerAuth, form({ email, password, full_name: `Client ${c.index}` })));
    c.userId = created.user_id;
    const key = must('POST /fetch_api_key', await request(port, 'POST', '/api/v1/fetch_api_key', undefined, form({ username: email, password })));
    c.auth = basic(key.email, key.api_key);
  });
  const names = Array.from({ length: channels }, (_, i) => `mixed-${i}`);
  for (let k = 0; k < channels; k++) {
    const members = list.filter((c) => c.index % channels === k || (c.index + 1) % channels === k);
    must('POST /users/me/subscriptions', await request(port, 'POST', '/api/v1/users/me/subscriptions', ownerAuth, form({
      subscriptions: JSON.stringify([{ name: names[k] }]),
      principals: JSON.stringify(members.map((c) => c.userId)),
    })));
  }
  const streams = must('GET /streams', await request(port, 'GET', '/api/v1/streams', ownerAuth));
  const idByName = new Map<string, number>((streams.streams as Array<{ name: string; stream_id: number }>).map((s) => [s.name, s.stream_id]));
  const channelIds = names.map((n) => idByName.get(n)!);
  for (const c of list) c.channels = [channelIds[c.index % channels]!, channelIds[(c.index + channels - 1) % channels]!];
  // A few messages in every channel and topic, so the first reads and reactions have something.
  const recent = new Map<number, number[]>(channelIds.map((id) => [id, []]));
  for (const id of channelIds) {
    const sender = list.find((c) => c.channels.includes(id))!;
    for (const topic of TOPICS) {
      const sent = must('POST /messages', await request(port, 'POST', '/api/v1/messages', sender.auth, form({ type: 'stream', to: id, topic, content: `first message in ${topic}` })));
      recent.get(id)!.push(sent.id);
    }
  }
  return { clients: list, channelIds, recent };
}

// ---------------------------------------------------------------- measuring

export class Stats {
  private readonly latencies = new Map<string, number[]>();
  private readonly counts = new Map<string, number>();
  private readonly errors = new Map<string, Map<string, number>>();
  readonly deliveries: number[] = [];
  /** Long-polls ended by the client itself (a queue re-registered): neither a success nor an error. */
  abortedPolls = 0;
  started = performance.now();
  /** Set false to count nothing (warm-up); `keepLatencies` false keeps memory flat on long runs. */
  recording = true;

  constructor(private readonly keepLatencies = true) {}

  record(op: string, r: Reply): void {
    if (!this.recording) return;
    this.counts.set(op, (this.counts.get(op) ?? 0) + 1);
    if (r.status >= 200 && r.status < 300) {
      if (this.keepLatencies) {
        let list = this.latencies.get(op);
        if (!list) this.latencies.set(op, (list = []));
        list.push(r.ms);
      }
      return;
    }
    const envelope = typeof r.body === 'object' && r.body ? (r.body as { code?: string; msg?: string }) : undefined;
    // Message texts carry ids (numbers, queue ids): any word with a digit in it is masked, so that one
    // kind of error is one line.
    const reason = r.status === 0 ? `network: ${String(r.body).slice(0, 80)}` : `${r.status} ${envelope?.code ?? ''} ${String(envelope?.msg ?? '').replace(/[\w:-]*\d[\w:-]*/g, 'N').slice(0, 80)}`.trim();
    let byReason = this.errors.get(op);
    if (!byReason) this.errors.set(op, (byReason = new Map()));
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }

  reset(): void {
    this.latencies.clear();
    this.counts.clear();
    this.errors.clear();
    this.deliveries.length = 0;
    this.abortedPolls = 0;
    this.started = performance.now();
  }

  total(): { requests: number; errors: number } {
    let requests = 0;
    let errors = 0;
    for (const n of this.counts.values()) requests += n;
    for (const m of this.errors.values()) for (const n of m.values()) errors += n;
    return { requests, errors };
  }

  rows(seconds: number): Array<Record<string, string | number>> {
    const rows: Array<Record<string, string | number>> = [];
    for (const [op, count] of [...this.counts].sort((a, b) => a[0].localeCompare(b[0]))) {
      const ok = this.latencies.get(op) ?? [];
      const errs = this.errors.get(op);
      const errorCount = errs ? [...errs.values()].reduce((a, b) => a + b, 0) : 0;
      rows.push({
        operation: op,
        count,
        per_s: Number((count / seconds).toFixed(1)),
        p50_ms: percentile(ok, 50),
        p99_ms: percentile(ok, 99),
        errors: errorCount,
        error_kinds: errs ? [...errs].map(([k, n]) => `${k} x${n}`).join('; ') : '',
      });
    }
    return rows;
  }
}

export interface Mix { send: number; get_messages: number; add_reaction: number; edit_message: number; register: number }
export const DEFAULT_MIX: Mix = { send: 25, get_messages: 35, add_reaction: 15, edit_message: 10, register: 5 };

function pick(mix: Mix): keyof Mix {
  const entries = Object.entries(mix) as Array<[keyof Mix, number]>;
  let r = Math.random() * entries.reduce((a, [, w]) => a + w, 0);
  for (const [name, weight] of entries) if ((r -= weight) < 0) return name;
  return entries[0]![0];
}

const REGISTER_BODY = form({ event_types: JSON.stringify(['message', 'update_message', 'reaction']) });

/**
 * Starts every client: one action loop and one long-poll loop each. stop() ends both and waits for
 * them. Every request's promise resolves (request() never rejects), and each loop body is wrapped so
 * that an unexpected throw is counted, never an unhandled rejection.
 */
export function runClients(port: number, world: World, stats: Stats, options: { thinkMs: number; mix?: Mix }): { stop(): Promise<void> } {
  let stopped = false;
  const mix = options.mix ?? DEFAULT_MIX;
  /** Message id → when its send request started, for delivery latency; pruned as it goes. */
  const sentAt = new Map<number, number>();
  const prune = setInterval(() => {
    const old = performance.now() - 60_000;
    for (const [id, t] of sentAt) if (t < old) sentAt.delete(id); else break;
  }, 5_000);

  const register = async (c: Client): Promise<void> => {
    const r = await request(port, 'POST', '/api/v1/register', c.auth, REGISTER_BODY);
    stats.record('register', r);
    if (r.status !== 200) return;
    const old = c.queue;
    c.queue = { id: r.body.queue_id, lastId: r.body.last_event_id };
    if (old) {
      // A client that re-registers drops its old queue: end its poll and delete it.
      c.pollAbort?.abort();
      stats.record('delete_queue', await request(port, 'DELETE', `/api/v1/events?${form({ queue_id: old.id })}`, c.auth));
    }
  };

  const act = async (c: Client): Promise<void> => {
    let action = pick(mix);
    if (action === 'edit_message' && c.own.length === 0) action = 'send';
    const channel = c.channels[Math.floor(Math.random() * c.channels.length)]!;
    const topic = TOPICS[Math.floor(Math.random() * TOPICS.length)]!;
    switch (action) {
      case 'send': {
        const t0 = performance.now();
        const r = await request(port, 'POST', '/api/v1/messages', c.auth, form({ type: 'stream', to: channel, topic, content: `message from client ${c.index} with **some** markdown and a :smile:` }));
        stats.record('send', r);
        if (r.status === 200) {
          sentAt.set(r.body.id, t0);
          c.own.push(r.body.id);
          if (c.own.length > 5) c.own.shift();
          const ring = world.recent.get(channel)!;
          ring.push(r.body.id);
          if (ring.length > 50) ring.shift();
        }
        return;
      }
      case 'get_messages': {
        const narrow = JSON.stringify([{ operator: 'channel', operand: channel }, { operator: 'topic', operand: topic }]);
        stats.record('get_messages', await request(port, 'GET', `/api/v1/messages?${form({ anchor: 'newest', num_before: 50, num_after: 0, narrow })}`, c.auth));
        return;
      }
      case 'add_reaction': {
        const ring = world.recent.get(channel)!;
        // A reaction this user has not yet put on that message (adding it twice is a client error).
        for (let tries = 0; tries < 5; tries++) {
          const message = ring[Math.floor(Math.random() * ring.length)]!;
          const emoji = EMOJI[Math.floor(Math.random() * EMOJI.length)]!;
          const key = `${message}:${emoji}`;
          if (c.reacted.has(key)) continue;
          c.reacted.add(key);
          if (c.reacted.size > 500) c.reacted.delete(c.reacted.values().next().value as string);
          stats.record('add_reaction', await request(port, 'POST', `/api/v1/messages/${message}/reactions`, c.auth, form({ emoji_name: emoji })));
          return;
        }
        return;
      }
      case 'edit_message': {
        const message = c.own[Math.floor(Math.random() * c.own.length)]!;
        stats.record('edit_message', await request(port, 'PATCH', `/api/v1/messages/${message}`, c.auth, form({ content: `edited by client ${c.index} at ${Date.now()}` })));
        return;
      }
      case 'register':
        await register(c);
        return;
      default: {
        const never: never = action;
        throw new Error(`unknown action ${String(never)}`);
      }
    }
  };

  const actionLoop = async (c: Client) => {
    while (!stopped) {
      try {
        await act(c);
      } catch (error) {
        stats.record('client_bug', { status: 0, body: String(error), ms: 0 });
      }
      if (options.thinkMs > 0) await sleep(options.thinkMs * (0.5 + Math.random()));
    }
  };

  const pollLoop = async (c: Client) => {
    while (!stopped) {
      try {
        const queue = c.queue;
        if (!queue) {
          await register(c);
          if (!c.queue) await sleep(500);
          continue;
        }
        const abort = new AbortController();
        c.pollAbort = abort;
        const r = await request(port, 'GET', `/api/v1/events?${form({ queue_id: queue.id, last_event_id: queue.lastId })}`, c.auth, undefined, { signal: abort.signal, timeoutMs: 60_000 });
        if (abort.signal.aborted || queue !== c.queue) {
          if (stats.recording) stats.abortedPolls += 1;
          continue;
        }
        stats.record('get_events', r);
        if (r.status !== 200) {
          // An expired or unknown queue: register a new one (as zulip clients do); otherwise back off.
          if (r.body?.code === 'BAD_EVENT_QUEUE_ID') c.queue = undefined;
          await sleep(500);
          continue;
        }
        const now = performance.now();
        for (const event of r.body.events as Array<{ id: number; type: string; message?: { id: number } }>) {
          queue.lastId = Math.max(queue.lastId, event.id);
          if (event.type === 'message' && event.message && stats.recording) {
            const t0 = sentAt.get(event.message.id);
            if (t0 !== undefined) stats.deliveries.push(now - t0);
          }
        }
      } catch (error) {
        stats.record('client_bug', { status: 0, body: String(error), ms: 0 });
        await sleep(500);
      }
    }
  };

  const loops: Array<Promise<void>> = [];
  for (const c of world.clients) {
    loops.push(pollLoop(c));
    loops.push(actionLoop(c));
  }
  return {
    async stop() {
      stopped = true;
      clearInterval(prune);
      for (const c of world.clients) c.pollAbort?.abort();
      await Promise.all(loops);
    },
  };
}

/** Starts clients in small groups (registering a queue each) so the first second is not a connect storm. */
export async function registerAll(port: number, world: World, stats: Stats): Promise<void> {
  await pool(world.clients, 20, async (c) => {
    const r = await request(port, 'POST', '/api/v1/register', c.auth, REGISTER_BODY);
    stats.record('register', r);
    if (r.status === 200) c.queue = { id: r.body.queue_id, lastId: r.body.last_event_id };
  });
}

export function loadAverage(): number[] {
  return os.loadavg().map((n) => Number(n.toFixed(2)));
}

// ---------------------------------------------------------------- references

/** Run as a child (`bench/mixed.ts --ceiling-server`): plain fastify + pg, one INSERT per request. */
async function ceilingServer(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const { default: formbody } = await import('@fastify/formbody');
  const { default: pg } = await import('pg');
  const pgPool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
  pgPool.on('error', () => undefined);
  await pgPool.query('CREATE TABLE IF NOT EXISTS plain_messages (id bigserial PRIMARY KEY, sender text NOT NULL, topic text NOT NULL, content text NOT NULL, date_sent bigint NOT NULL)');
  const app = Fastify({ logger: false });
  await app.register(formbody);
  app.post('/messages', async (req) => {
    const body = req.body as Record<string, string>;
    const result = await pgPool.query('INSERT INTO plain_messages (sender, topic, content, date_sent) VALUES ($1, $2, $3, $4) RETURNING id', [
      req.headers.authorization ?? '', body.topic ?? '', body.content ?? '', Math.floor(Date.now() / 1000),
    ]);
    return { result: 'success', msg: '', id: Number(result.rows[0].id) };
  });
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT), backlog: 4096 });
  console.log('listening on ceiling');
}

/** The ceiling: `clients` closed-loop clients, each POSTing a message to the plain server. */
export async function measureCeiling(clients: number, seconds: number) {
  const database = await freshDatabase('bench_mixed_ceiling');
  const port = freePort();
  let proc: Awaited<ReturnType<typeof spawnListening>> | undefined;
  try {
    proc = await spawnListening(['--import', 'tsx', 'bench/mixed.ts', '--ceiling-server'], { DATABASE_URL: database.url, PORT: String(port) });
    const stats = new Stats();
    let stop = false;
    const loops = Array.from({ length: clients }, async (_, w) => {
      const auth = basic(`client${w}@example.com`, 'key');
      while (!stop) stats.record('insert', await request(port, 'POST', '/messages', auth, form({ type: 'stream', to: 1, topic: `topic ${w % 5}`, content: `message from client ${w} with **some** markdown and a :smile:` })));
    });
    await sleep(1_000);
    stats.reset();
    await sleep(seconds * 1000);
    stats.recording = false;
    const elapsed = (performance.now() - stats.started) / 1000;
    stop = true;
    await Promise.all(loops);
    return stats.rows(elapsed)[0]!;
  } finally {
    proc?.child.kill('SIGKILL');
    await database.drop().catch(() => undefined);
  }
}

/** The long-poll floor: `n` requests held by a bare fastify process, released at once; each answer timed. */
export async function measureFloor(n: number, rounds: number) {
  const port = freePort();
  const proc = await spawnListening(['--import', 'tsx', 'bench/floor-server.ts'], { PORT: String(port) });
  try {
    const answers: number[] = [];
    let failures = 0;
    for (let round = 0; round < rounds; round++) {
      let released = 0;
      const polls = Array.from({ length: n }, () => request(port, 'GET', '/hold', undefined).then((r) => {
        if (r.status !== 200) failures += 1;
        else if (released > 0) answers.push(performance.now() - released);
      }));
      for (let i = 0; (await request(port, 'GET', '/held', undefined)).body?.held < n && i < 200; i++) await sleep(25);
      released = performance.now();
      await request(port, 'GET', '/release', undefined);
      await Promise.all(polls);
    }
    return { held_requests: n, rounds, p50_ms: percentile(answers, 50), p99_ms: percentile(answers, 99), failures };
  } finally {
    proc.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------- main

interface Phase {
  name: string;
  thinkMs: number;
  seconds: number;
  stats: Stats;
  loadAverage: string;
}

/** One phase of the same clients on the same server: `thinkMs` between each client's actions. */
async function runPhase(server: ServerProcess, world: World, name: string, thinkMs: number, seconds: number): Promise<Phase> {
  console.log(`mixed: ${name}: ${world.clients.length} clients for ${seconds} s (think time ${thinkMs} ms)`);
  const stats = new Stats();
  const run = runClients(server.port, world, stats, { thinkMs });
  // The first seconds (connects, first polls, the previous phase draining) are not counted.
  await sleep(5_000);
  stats.reset();
  await sleep(seconds * 1000);
  stats.recording = false;
  const elapsed = (performance.now() - stats.started) / 1000;
  const load = loadAverage().join(' ');
  await run.stop();
  console.log(JSON.stringify(stats.rows(elapsed)));
  return { name, thinkMs, seconds: elapsed, stats, loadAverage: load };
}

function summarize(phase: Phase) {
  const rows = phase.stats.rows(phase.seconds);
  const totals = phase.stats.total();
  const actions = rows.filter((r) => r.operation !== 'get_events').reduce((a, r) => a + Number(r.count), 0);
  return {
    rows,
    actionsPerS: actions / phase.seconds,
    deliveryP50: percentile(phase.stats.deliveries, 50),
    totals: {
      think_ms: phase.thinkMs, seconds: Number(phase.seconds.toFixed(1)), load_average_at_end: phase.loadAverage,
      requests: totals.requests, errors: totals.errors, actions_per_s: Number((actions / phase.seconds).toFixed(1)),
      requests_per_s: Number((totals.requests / phase.seconds).toFixed(1)), long_polls_ended_by_client: phase.stats.abortedPolls,
      message_deliveries: phase.stats.deliveries.length,
      message_delivery_p50_ms: percentile(phase.stats.deliveries, 50), message_delivery_p99_ms: percentile(phase.stats.deliveries, 99),
    },
  };
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  const clients = Number(process.env.BENCH_CLIENTS ?? 500);
  const thinkMs = Number(process.env.BENCH_THINK_MS ?? 10_000);
  const channels = Number(process.env.BENCH_CHANNELS ?? 10);
  const ceilingSeconds = Number(process.env.BENCH_CEILING_SECONDS ?? 15);
  const loadBefore = loadAverage();

  console.log(`mixed: starting the server, creating ${clients} users and ${channels} channels through the API`);
  const server = await startServer('bench_mixed');
  let result: Record<string, unknown>;
  try {
    const setupStarted = performance.now();
    const world = await setupWorld(server, clients, channels);
    const setupSeconds = (performance.now() - setupStarted) / 1000;
    const registered = new Stats();
    await registerAll(server.port, world, registered);
    // Paced first (people who read between actions), then saturated (no pause: the capacity).
    const paced = summarize(await runPhase(server, world, 'paced', thinkMs, seconds));
    const saturated = summarize(await runPhase(server, world, 'saturated', 0, seconds));
    const alive = server.child.exitCode === null && server.child.signalCode === null;
    await server.stop();

    console.log(`mixed: ceiling (plain fastify + pg, ${clients} closed-loop clients, ${ceilingSeconds} s)`);
    const ceiling = await measureCeiling(clients, ceilingSeconds);
    console.log(JSON.stringify(ceiling));
    console.log(`mixed: long-poll floor (${clients} held requests)`);
    const floor = await measureFloor(clients, 10);
    console.log(JSON.stringify(floor));

    result = {
      benchmark: 'mixed',
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, load_average_before: loadBefore.join(' '), load_average_after: loadAverage().join(' ') },
      setup: {
        clients, channels, subscribers_per_channel: Math.round((2 * clients) / channels), seconds_per_phase: seconds,
        mix_percent: JSON.stringify(DEFAULT_MIX), setup_seconds: Number(setupSeconds.toFixed(1)), initial_registers_failed: registered.total().errors,
        transport: 'HTTP keep-alive on 127.0.0.1', server: 'src/server.ts process on PostgreSQL + NATS', server_survived: alive,
        phases: `paced: each client waits ${thinkMs / 2}-${(thinkMs * 3) / 2} ms between actions; saturated: no pause (closed loop), the capacity`,
      },
      totals_paced: paced.totals,
      operations_paced: paced.rows,
      totals_saturated: saturated.totals,
      operations_saturated: saturated.rows,
      operations_note: 'every client also keeps one GET /events open and acknowledges what it gets; get_events latency is how long a long-poll stayed open (until it had events, or its 20 s heartbeat). error_kinds lists every non-2xx status (code and message) and every network failure (client timeouts: 30 s, 60 s for long-polls). Message delivery: from the send request starting to the message event in a subscriber\'s long-poll answer.',
      references: [
        { reference: 'ceiling: plain fastify + pg, one INSERT per request, closed loop', clients, per_s: ceiling.per_s, p50_ms: ceiling.p50_ms, p99_ms: ceiling.p99_ms, errors: ceiling.errors,
          ours: `saturated: ${saturated.actionsPerS.toFixed(1)} actions/s`, ratio: Number((saturated.actionsPerS / Number(ceiling.per_s)).toFixed(3)) },
        { reference: `floor: bare long-poll, ${floor.held_requests} held requests released at once`, clients, per_s: '', p50_ms: floor.p50_ms, p99_ms: floor.p99_ms, errors: floor.failures,
          ours: `paced: message delivery p50 ${paced.deliveryP50} ms`, ratio: Number((paced.deliveryP50 / Math.max(floor.p50_ms, 0.1)).toFixed(1)) },
      ],
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
  console.log(`written to ${writeResult('mixed', result)}`);
  agent.destroy();
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.join(benchRoot, 'mixed.ts');
if (isMain) {
  if (process.argv.includes('--ceiling-server')) await ceilingServer();
  else await main();
}
