import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { startTestServer, Role } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const zulipInit = require('zulip-js') as (config: { zuliprc: string }) => Promise<any>;

t.test('the real zulip-js client: server settings, users, register, events', async (t) => {
  const s = await startTestServer(t);
  await s.fastify.listen({ host: '127.0.0.1', port: 0 });
  const port = (s.fastify.server.address() as AddressInfo).port;
  const member = await s.user(Role.MEMBER, 'Client User');
  const dir = mkdtempSync(path.join(tmpdir(), 'zuliprc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const zuliprc = path.join(dir, 'zuliprc');
  writeFileSync(zuliprc, `[api]\nemail=${member.email}\nkey=${member.apiKey}\nsite=http://127.0.0.1:${port}\n`);

  const client = await zulipInit({ zuliprc });

  const settings = await client.server.settings();
  t.equal(settings.result, 'success');
  t.equal(settings.zulip_feature_level, 275);

  const users = await client.users.retrieve();
  t.equal(users.result, 'success');
  t.ok(users.members.some((u: { user_id: number }) => u.user_id === member.id));

  const me = await client.users.me.getProfile();
  t.equal(me.user_id, member.id);
  t.equal(me.full_name, 'Client User');

  // zulip-js posts multipart/form-data with arrays JSON-encoded.
  const queue = await client.queues.register({ event_types: ['realm_user'] });
  t.equal(queue.result, 'success', JSON.stringify(queue));
  t.type(queue.queue_id, 'string');

  const poll = client.events.retrieve({ queue_id: queue.queue_id, last_event_id: queue.last_event_id });
  await new Promise((r) => setTimeout(r, 100));
  await s.api('PATCH', `/users/${member.id}`, s.owner, { full_name: 'Renamed By Admin' });
  const events = await poll;
  t.equal(events.result, 'success');
  t.match(events.events, [{ type: 'realm_user', op: 'update', person: { user_id: member.id, full_name: 'Renamed By Admin' } }]);

  const removed = await client.queues.deregister({ queue_id: queue.queue_id });
  t.equal(removed.result, 'success');
  const gone = await client.events.retrieve({ queue_id: queue.queue_id, dont_block: true });
  t.equal(gone.code, 'BAD_EVENT_QUEUE_ID');
});
