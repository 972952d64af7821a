import t from 'tap';
import { sql } from 'kysely';
import { QueueCache } from '../../src/event-queue/queue-cache.js';
import { startTestPlatform } from '../helpers/platform.js';

t.test('the queue cache vouches for a queue only while the change mark stands, and drops deleted queues', async (t) => {
  const p = await startTestPlatform(t, []);
  await sql`INSERT INTO event_queues (id, user_id, realm_id, event_types, narrow, options, registered_position, lifespan_secs, created_at)
    VALUES ('q1', 1, 1, 'null', '[]', '{}', 0, 600, 0), ('q2', 1, 1, 'null', '[]', '{}', 0, 600, 0)`.execute(p.db);
  let version = 1;
  let reads = 0;
  const cache = new QueueCache<{ id: string }>(p.db, () => version);
  const load = async (id: string) => {
    const { entry, mark } = await cache.get(id);
    if (entry) return entry;
    reads += 1;
    const row = await p.db.selectFrom('event_queues').select('id').where('id', '=', id).executeTakeFirst();
    return row ? cache.set(id, row, 0, mark) : undefined;
  };
  t.ok(await load('q1'));
  t.ok(await load('q2'));
  t.ok(await load('q1'));
  t.equal(reads, 2, 'a queue is read once while the mark stands');

  await sql`DELETE FROM event_queues WHERE id = 'q1'`.execute(p.db);
  t.ok(await load('q1'), 'an unchanged mark keeps vouching (the mark is what tells of a deletion)');
  version = 2;
  t.equal(await load('q1'), undefined, 'a moved mark makes the cache check: the deleted queue is gone');
  t.ok(await load('q2'), 'the other is still cached');
  t.equal(reads, 3, 'only the deleted queue was read again');
  t.equal(cache.size, 1);

  // A row read before a recheck ran is not cached: it may predate the deletion the recheck saw.
  const { mark } = await cache.get('q3');
  version = 3;
  await cache.get('q2');
  cache.set('q3', { id: 'q3' }, 0, mark);
  t.equal(cache.size, 1, 'a read from before the latest recheck is not kept');
});
