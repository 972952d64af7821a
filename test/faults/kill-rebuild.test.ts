/**
 * kill -9 during a mixed write load (issue 9): after a restart on the same database every write that
 * got a success response is in the log, the read tables and GET /messages; a queue registered before
 * the crash is still valid; and `rebuild` refolds the log into tables identical to the live ones, so
 * nothing the crash interrupted was left half-applied.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { privatePostgres, privateNats, client, freePort } from './infra.js';
import { loadConfig } from '../../src/config.js';
import { rebuildCommand } from '../../src/cli/commands.js';
import { allProjections } from '../../projections/index.js';

t.setTimeout(170_000);

t.test('kill -9 mid-load, restart, and rebuild equals the live tables', async (t) => {
  const postgres = await privatePostgres(t);
  const nats = await privateNats(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'fault-kill-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  let server: ChildServer | undefined;
  t.teardown(async () => {
    if (server) await killHard(server);
  });
  process.once('exit', () => server?.process.kill('SIGKILL'));
  const env = { DATA_DIR: dataDir, DATABASE_URL: postgres.url, NATS_URL: nats.url, NATS_STREAM: 'FAULTS', HEARTBEAT_SECONDS: '2', RATE_LIMIT_PER_MINUTE: '0' };
  server = await startChildServer({ ...env, PORT: String(await freePort()) });
  const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
  let api = client(server.url, 'owner@example.com', key, 20_000);

  const created = await api('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'crash' }] });
  t.equal(created.status, 200, 'channel created');
  const reg = await api('POST', '/register', { event_types: ['message', 'reaction', 'update_message'] });
  t.equal(reg.status, 200, 'queue registered before the crash');

  // Sends, reactions, edits and new users, until the process dies under them.
  const sent: Array<{ id: number; content: string }> = [];
  const edited = new Map<number, string>();
  const users: number[] = [];
  let running = true;
  let n = 0;
  const writer = async (w: number) => {
    while (running) {
      n += 1;
      const step = n % 4;
      try {
        if (step === 0 && sent.length > 0) {
          const target = sent[Math.floor(Math.random() * sent.length)]!;
          const content = `edited ${n}`;
          const r = await api('PATCH', `/messages/${target.id}`, { content });
          if (r.status === 200) edited.set(target.id, content);
        } else if (step === 1 && sent.length > 0) {
          await api('POST', `/messages/${sent[sent.length - 1]!.id}/reactions`, { emoji_name: 'octopus' });
        } else if (step === 2) {
          const r = await api('POST', '/users', { email: `k${w}-${n}@example.com`, full_name: `Crash ${n}` });
          if (r.status === 200) users.push(r.body.user_id);
        } else {
          const content = `message ${n} from writer ${w}`;
          const r = await api('POST', '/messages', { type: 'stream', to: 'crash', topic: `t${n % 3}`, content });
          if (r.status === 200) sent.push({ id: r.body.id, content });
        }
      } catch {
        // The request the kill cut off was never acknowledged.
      }
    }
  };
  const load = [writer(0), writer(1), writer(2)];
  // Kill once the load is well under way: at least 3 s in and 20 messages acknowledged (a loaded
  // machine can take longer to get there; the kill must still land in the middle of the load).
  const started = Date.now();
  while (Date.now() - started < 3_000 || (sent.length < 20 && Date.now() - started < 60_000)) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await killHard(server);
  running = false;
  await Promise.all(load);
  t.ok(sent.length > 10, `${sent.length} messages, ${edited.size} edits and ${users.length} users acknowledged before the kill`);

  server = await startChildServer({ ...env, PORT: String(await freePort()) });
  api = client(server.url, 'owner@example.com', key, 20_000);

  const served = new Map<number, string>();
  const page = await api('GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 5000, narrow: [{ operator: 'channel', operand: 'crash' }], apply_markdown: false });
  t.equal(page.status, 200, 'GET /messages after the restart');
  for (const m of page.body.messages as Array<{ id: number; content: string }>) served.set(m.id, m.content);
  t.same(sent.filter((m) => !served.has(m.id)).map((m) => m.id), [], 'every acknowledged message is served');
  // Each message shows its last acknowledged edit, or a later one (an edit the kill cut off after its commit).
  const editNumber = (content: string | undefined) => Number(/^edited (\d+)$/.exec(content ?? '')?.[1] ?? -1);
  const lostEdits = [...edited].filter(([id, content]) => editNumber(served.get(id)) < editNumber(content));
  t.same(lostEdits, [], 'no acknowledged edit is lost');
  const members = ((await api('GET', '/users')).body.members as Array<{ user_id: number }>).map((m) => m.user_id);
  t.same(users.filter((id) => !members.includes(id)), [], 'every acknowledged user is served');

  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  t.teardown(() => db.end());
  const logged = new Set((await db.query("SELECT (data->>'message_id')::int AS id FROM events WHERE type = 'MessageSent'")).rows.map((r) => r.id as number));
  t.same(sent.filter((m) => !logged.has(m.id)).map((m) => m.id), [], 'every acknowledged message is in the log');

  const events = await api('GET', '/events', { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
  t.equal(events.status, 200, 'the queue registered before the crash is still valid');
  const delivered = new Set((events.body.events as Array<{ type: string; message?: { id: number } }>).filter((e) => e.type === 'message').map((e) => e.message!.id));
  t.same(sent.filter((m) => !delivered.has(m.id)).map((m) => m.id), [], 'and it delivers every acknowledged message');

  // Refold the whole log while the restarted server is up: same tables, row for row.
  const lines: string[] = [];
  const report = await rebuildCommand({ ...loadConfig({ ...env, PORT: '0' }), natsUrl: undefined }, allProjections, (line) => lines.push(line), false);
  t.ok(report.events > 0, `rebuilt ${report.events} events`);
  t.equal(report.identical, true, 'rebuild checksums equal the live tables');
  if (!report.identical) t.comment(lines.join('\n'));
});
