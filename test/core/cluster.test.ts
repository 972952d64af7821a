import t from 'tap';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { freePort } from '../faults/infra.js';
import { testConfig } from '../helpers/config.js';

t.setTimeout(170_000);

t.test('WEB_CONCURRENCY: defaults and refusals', async (t) => {
  t.equal(loadConfig({}).webConcurrency, 1, 'one process on the embedded database');
  t.equal(loadConfig({ DATABASE_URL: 'postgres://x/y' }).webConcurrency, 1, 'one process without NATS');
  t.ok(loadConfig({ DATABASE_URL: 'postgres://x/y', NATS_URL: 'nats://n:4222' }).webConcurrency >= 1, 'one per core on PostgreSQL + NATS');
  t.equal(loadConfig({ DATABASE_URL: 'postgres://x/y', NATS_URL: 'nats://n:4222', WEB_CONCURRENCY: '3' }).webConcurrency, 3);
  t.throws(() => loadConfig({ WEB_CONCURRENCY: '2' }), /WEB_CONCURRENCY=2 needs DATABASE_URL: the embedded database \(PGlite\) has one writer/);
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://x/y', WEB_CONCURRENCY: '2' }), /WEB_CONCURRENCY=2 needs NATS_URL/);
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://x/y', NATS_URL: 'nats://n:4222', WEB_CONCURRENCY: '0' }), /at least 1/);
  t.throws(() => loadConfig({ WEB_CONCURRENCY: 'many' }), /WEB_CONCURRENCY must be a non-negative integer/);
  t.equal(loadConfig({ WEB_CONCURRENCY: '1' }).webConcurrency, 1, 'an explicit 1 is fine on the embedded database');
});

interface Answer {
  status: number;
  body: any;
}

/** One request on a connection of its own, so that successive requests land on either worker. */
function request(port: number, auth: string, method: string, url: string, requestId: string, params: Record<string, string> = {}): Promise<Answer> {
  const form = new URLSearchParams(params).toString();
  const query = method === 'GET' ? `?${form}` : '';
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: `/api/v1${url}${query}`,
        agent: false,
        headers: {
          authorization: auth,
          'x-request-id': requestId,
          connection: 'close',
          ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    if (method !== 'GET') req.write(form);
    req.end();
  });
}

/** The pid of the worker that logged the request with this id (pino puts the pid on every line). */
function servedBy(server: ChildServer, requestId: string): number | undefined {
  for (const line of server.output().split('\n')) {
    if (!line.startsWith('{') || !line.includes(requestId)) continue;
    const entry = JSON.parse(line) as { msg?: string; reqId?: string; pid?: number };
    if (entry.msg === 'request' && entry.reqId === requestId) return entry.pid;
  }
  return undefined;
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  for (const started = Date.now(); Date.now() - started < timeoutMs; await new Promise((r) => setTimeout(r, 50))) {
    const value = probe();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

const onPostgres = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_NATS_URL);

t.test('WEB_CONCURRENCY=2: a queue registered through one worker is served by the other; restart and graceful stop', { skip: !onPostgres && 'needs TEST_DATABASE_URL and TEST_NATS_URL' }, async (t) => {
  const config = await testConfig();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cluster-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const server = await startChildServer({
    DATABASE_URL: config.databaseUrl!,
    NATS_URL: config.natsUrl!,
    NATS_STREAM: config.natsStream,
    DATA_DIR: dataDir,
    DATA_KEY_SECRET: randomBytes(32).toString('hex'),
    PORT: String(port),
    WEB_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
    HEARTBEAT_SECONDS: '3',
  }, 120_000, { compiled: true });
  t.teardown(() => killHard(server));
  t.match(server.output(), /listening on .*2 server processes/);
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const auth = `Basic ${Buffer.from(`owner@example.com:${key}`).toString('base64')}`;
  let n = 0;
  const call = async (method: string, url: string, params: Record<string, string> = {}) => {
    const id = `cluster-test-${++n}`;
    const answer = await request(port, auth, method, url, id, params);
    return { ...answer, pid: await until(`the log line of ${id}`, () => servedBy(server, id)) };
  };

  const registered = await call('POST', '/register', { event_types: JSON.stringify(['message']) });
  t.equal(registered.status, 200);
  const queueId = registered.body.queue_id as string;
  let lastEventId = registered.body.last_event_id as number;
  const pollers = new Set<number>();
  const senders = new Set<number>();
  for (let i = 0; i < 6; i++) {
    const content = `round ${i} through either worker`;
    // Odd rounds block first and are woken by the send; even rounds send first and read without blocking.
    const blocking = i % 2 === 1;
    const poll = blocking ? call('GET', '/events', { queue_id: queueId, last_event_id: String(lastEventId) }) : undefined;
    if (poll) await new Promise((r) => setTimeout(r, 300));
    const sent = await call('POST', '/messages', { type: 'stream', to: 'general', topic: 'cluster', content });
    t.equal(sent.status, 200, `round ${i}: sent`);
    senders.add(sent.pid);
    const got = await (poll ?? call('GET', '/events', { queue_id: queueId, last_event_id: String(lastEventId), dont_block: 'true' }));
    t.equal(got.status, 200, `round ${i}: polled`);
    const messages = (got.body.events as Array<{ type: string; id: number; message?: { id: number } }>).filter((e) => e.type === 'message');
    t.same(messages.map((e) => e.message!.id), [sent.body.id], `round ${i}: the message sent through ${sent.pid} is delivered through ${got.pid}`);
    lastEventId = Math.max(lastEventId, ...(got.body.events as Array<{ id: number }>).map((e) => e.id));
    pollers.add(got.pid);
  }
  const workers = new Set([registered.pid, ...pollers, ...senders]);
  t.equal(workers.size, 2, `requests landed on both workers (${[...workers].join(', ')})`);
  t.ok([...pollers].some((pid) => pid !== registered.pid), 'a worker that did not register the queue served it');

  // A worker that dies is replaced, and the queue is still served.
  const victim = registered.pid;
  process.kill(victim, 'SIGKILL');
  await until('a replacement worker', () => (/exited \(signal SIGKILL\); starting another/.test(server.output()) ? true : undefined));
  const newPids = await until('two workers answering', () => {
    const listening = [...server.output().matchAll(/"pid":(\d+)[^\n]*Server listening at/g)].map((m) => Number(m[1]));
    return listening.filter((pid) => pid !== victim).length >= 2 ? listening : undefined;
  }, 60_000);
  t.ok(newPids.length >= 3, 'a third worker started');
  const after = await call('GET', '/events', { queue_id: queueId, last_event_id: String(lastEventId), dont_block: 'true' });
  t.equal(after.status, 200, 'the queue survives the worker that registered it');
  t.not(after.pid, victim);

  // SIGTERM to the supervisor: a blocked long-poll is answered (a heartbeat) and everything exits 0.
  const blocked = request(port, auth, 'GET', '/events', 'cluster-test-blocked', { queue_id: queueId, last_event_id: String(lastEventId) });
  await new Promise((r) => setTimeout(r, 500));
  const exited = once(server.process, 'exit');
  server.process.kill('SIGTERM');
  const answer = await blocked;
  t.equal(answer.status, 200, 'the blocked long-poll is answered');
  t.match(answer.body.events, [{ type: 'heartbeat' }]);
  const [code] = await exited;
  t.equal(code, 0, 'the supervisor exits 0 after its workers stopped');
  t.match(server.output(), /SIGTERM: stopping 2 server processes/);
});
