import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { createChannel, unsubscribe } from '../helpers/channels-fixture.js';

t.test('scheduled messages: rebuild reproduces the read table through every kind of event', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, bob, 'replay-private', [alice], { invite_only: true });
  const at = Math.floor(Date.now() / 1000) + 120;
  const post = async (params: Record<string, unknown>) =>
    (await s.api('POST', '/scheduled_messages', alice, { scheduled_delivery_timestamp: at, ...params })).body.scheduled_message_id as number;
  const delivered = await post({ type: 'direct', to: [bob.id], content: 'will be sent' });
  const edited = await post({ type: 'direct', to: [alice.id], content: 'will be edited', scheduled_delivery_timestamp: at + 3600 });
  const deleted = await post({ type: 'direct', to: [bob.id], content: 'will be deleted' });
  const failed = await post({ type: 'stream', to: sid, topic: 't', content: 'will fail' });
  t.equal((await s.api('PATCH', `/scheduled_messages/${edited}`, alice, { content: 'edited', topic: 'ignored' })).status, 200);
  t.equal((await s.api('DELETE', `/scheduled_messages/${deleted}`, alice)).status, 200);
  await unsubscribe(s, alice, 'replay-private', [alice]);
  t.same(await s.scheduler.runOnce(new Date((at + 1) * 1000)), { delivered: 1, failed: 1 });

  const rows = await s.platform.db.selectFrom('scheduled_messages').select(['id', 'delivered', 'failed']).orderBy('id').execute();
  t.same(rows, [
    { id: delivered, delivered: true, failed: false },
    { id: edited, delivered: false, failed: false },
    { id: failed, delivered: false, failed: true },
  ]);
  const tables = ['scheduled_messages', 'messages'];
  const before = await tableChecksums(s.platform.db, tables);
  await s.platform.projections.rebuild();
  t.same(await tableChecksums(s.platform.db, tables), before, 'identical after rebuild');
});
