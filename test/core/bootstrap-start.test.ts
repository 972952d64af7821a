import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startChildServer, killHard, type ChildServer } from '../helpers/child-server.js';
import { testConfig } from '../helpers/config.js';
import { client, freePort } from '../faults/infra.js';

t.setTimeout(170_000);

async function stop(server: ChildServer): Promise<void> {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return;
  const exited = once(server.process, 'exit');
  server.process.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
  await killHard(server);
}

t.test('npm start on an empty DATA_DIR starts the organization as the real server does, once', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bootstrap-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = await testConfig();
  const env: Record<string, string> = { DATA_DIR: dataDir, ...(config.databaseUrl ? { DATABASE_URL: config.databaseUrl } : {}) };
  if (config.natsUrl) Object.assign(env, { NATS_URL: config.natsUrl, NATS_STREAM: config.natsStream });
  const snapshot = async () => {
    // As `npm start` runs it: compiled, under plain node.
    const server = await startChildServer({ ...env, PORT: String(await freePort()) }, 60_000, { compiled: true });
    try {
      const key = /key=(\S+)/.exec(readFileSync(path.join(dataDir, 'zuliprc'), 'utf8'))![1]!;
      const api = client(server.url, 'owner@example.com', key, 20_000);
      const streams = (await api('GET', '/streams')).body.streams as Array<{ name: string; invite_only: boolean }>;
      const subs = (await api('GET', '/users/me/subscriptions')).body.subscriptions as Array<{ name: string }>;
      const reg = (await api('POST', '/register', { fetch_event_types: JSON.stringify(['realm', 'realm_user']) })).body;
      const messages = (await api('GET', '/messages', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: JSON.stringify([]) })).body.messages as Array<{ sender_email: string; display_recipient: string; subject: string }>;
      return { streams, subs, reg, messages };
    } finally {
      await stop(server);
    }
  };
  const first = await snapshot();
  t.same(first.streams.map((c) => [c.name, c.invite_only]).sort(), [['core team', true], ['general', false]]);
  t.same(first.subs.map((c) => c.name).sort(), ['core team', 'general']);
  const general = first.streams.find((c) => c.name === 'general') as unknown as { stream_id: number };
  t.equal(first.reg.realm_new_stream_announcements_stream_id, general.stream_id);
  t.same(first.reg.cross_realm_bots.map((b: { email: string }) => b.email), ['notification-bot@zulip.com', 'welcome-bot@zulip.com']);
  t.same(first.messages.map((m) => [m.sender_email, m.display_recipient, m.subject]), [
    ['welcome-bot@zulip.com', 'core team', 'private channels'],
    ['welcome-bot@zulip.com', 'general', 'topic demonstration'],
    ['welcome-bot@zulip.com', 'general', 'topic demonstration'],
    ['welcome-bot@zulip.com', 'general', 'swimming turtles'],
    ['welcome-bot@zulip.com', 'general', 'Zulip updates'],
  ]);
  const second = await snapshot();
  t.same(second.streams, first.streams, 'a second start creates no channel');
  t.same(second.messages, first.messages, 'and sends no message');
  t.same(second.reg.cross_realm_bots, first.reg.cross_realm_bots, 'and no bot');
});
