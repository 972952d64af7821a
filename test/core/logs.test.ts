import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildServer, killHard } from '../helpers/child-server.js';
import { client, freePort } from '../faults/infra.js';
import { createRequire } from 'node:module';
import { serverLoggerOptions } from '../../src/observability/logger.js';

t.setTimeout(170_000);

t.test('a real run logs one JSON line per request and never a key, a password or message content', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'logs-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const server = await startChildServer({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' }, 60_000, { compiled: true });
  t.teardown(() => killHard(server));
  const ownerKey = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  const owner = client(server.url, 'owner@example.com', ownerKey);

  const password = 'correct-horse-battery-staple-7f3a';
  const marker = 'zebra-quartz-marker-91c2';
  t.equal((await owner('POST', '/users', { email: 'logged@example.com', password, full_name: 'Logged User' })).status, 200);
  const fetched = await fetch(`${server.url}/api/v1/fetch_api_key`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'logged@example.com', password }),
  });
  t.equal(fetched.status, 200);
  const userKey = ((await fetched.json()) as { api_key: string }).api_key;
  const user = client(server.url, 'logged@example.com', userKey);
  t.equal((await user('POST', '/messages', { type: 'stream', to: 'general', topic: `topic ${marker}`, content: `secret ${marker}` })).status, 200);
  t.equal((await user('GET', '/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: 'search', operand: marker }]) })).status, 200);
  // A key in the query string (as some clients send it to download a file) and a wrong password.
  await fetch(`${server.url}/user_uploads/1/ab/file.txt?api_key=${userKey}`);
  const refused = await fetch(`${server.url}/api/v1/fetch_api_key`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: 'logged@example.com', password: `${password}-wrong` }),
  });
  t.equal(refused.status, 401);
  t.equal((await owner('GET', '/messages/matches_narrow', { msg_ids: '[1]', narrow: JSON.stringify([{ operator: 'search', operand: marker }]) })).status, 200);

  // The compiled build carries the console's templates and stylesheet, not only JavaScript.
  const login = await fetch(`${server.url}/audit/login`);
  t.equal(login.status, 200);
  t.match(await login.text(), /<form/);
  t.equal((await fetch(`${server.url}/audit/assets/console.css`)).status, 200);

  // Lines are written in batches, but a quiet server's lines still come out within a couple of seconds.
  const loggedAsset = () => server.output().split('\n').some((l) => l.includes('"path":"/audit/assets/console.css"'));
  const waitedFrom = Date.now();
  while (!loggedAsset() && Date.now() - waitedFrom < 5_000) await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(loggedAsset(), `the last request's line is written without waiting for more lines (${Date.now() - waitedFrom} ms)`);

  const exited = once(server.process, 'exit');
  server.process.kill('SIGTERM');
  await exited;
  const lines = server.output().split('\n').filter((l) => l.startsWith('{'));
  const requests = lines.map((l) => JSON.parse(l)).filter((entry) => entry.msg === 'request');
  t.ok(requests.length >= 9, `every request is logged (${requests.length} lines)`);
  t.ok(requests.every((r) => typeof r.path === 'string' && typeof r.status === 'number' && typeof r.method === 'string'), 'method, path and status on each line');
  t.notOk(lines.some((l) => /incoming request|request completed/.test(l)), 'one line per request, not two');
  const output = server.output();
  for (const [what, secret] of [['the owner API key', ownerKey], ['a user API key', userKey], ['a password', password], ['message content or topic', marker]] as const) {
    t.notOk(output.includes(secret), `no log line holds ${what}`);
  }
});

t.test('on a terminal the log is readable lines from pino-pretty; elsewhere JSON lines', async (t) => {
  const terminal = serverLoggerOptions('info', true) as { transport?: { target: string; options: { singleLine: boolean } } };
  t.equal(terminal.transport?.target, 'pino-pretty');
  t.equal(terminal.transport?.options.singleLine, true);
  t.ok(createRequire(import.meta.url).resolve('pino-pretty'), 'pino-pretty is installed (a production dependency)');
  const plain = serverLoggerOptions('info', false) as { stream?: { minLength?: number } };
  t.notOk('transport' in plain, 'JSON lines when the output is not a terminal');
  t.ok((plain.stream?.minLength ?? 0) >= 1024, 'written through a buffer of lines, not a write per line');
});
