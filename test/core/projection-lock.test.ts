import t, { type Test } from 'tap';
import pg from 'pg';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { EventStore } from '../../src/eventstore/event-store.js';
import { InProcessBus } from '../../src/bus/in-process-bus.js';
import { ProjectionRunner, PROJECTION_LOCK_KEY } from '../../src/projection-runner.js';
import { allProjections } from '../../projections/index.js';
import type { Db } from '../../src/db/database.js';
import type { Projection } from '../../src/projections-api.js';
import { startTestServer } from '../helpers/server.js';

const note = (store: EventStore, data: Record<string, unknown> = {}) => store.append(
  [{ streamId: 'test-note', expectedVersion: undefined, events: [{ type: 'TestNote', data }] }],
  { actor_id: null, realm_id: 1, client: 'test', request_id: 'note', time: new Date().toISOString() },
);

/** The text of every statement run through the returned database handle, in order. */
function recording(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }: PluginTransformQueryArgs): RootOperationNode => {
      statements.push(db.getExecutor().compileQuery(node, { queryId: 'recorded' }).sql);
      return node;
    },
    transformResult: async ({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => result,
  };
  return { db: db.withPlugin(plugin), statements };
}

/** A worker of its own (its own store and bus: it hears only its own commits), as another process's. */
async function ownWorker(t: Test, db: Db, projections: readonly Projection[] = allProjections) {
  const store = new EventStore(db);
  const runner = new ProjectionRunner(db, store, projections, new InProcessBus());
  t.teardown(() => runner.stop());
  await note(store);
  await runner.catchUp();
  return { store, runner };
}

t.test('a live pass takes the projection lock in the statement that moves the checkpoints', async (t) => {
  const s = await startTestServer(t);
  // The server's own worker stays out of the way (its safety timer would move the checkpoints).
  s.platform.projections.stop();
  const recorder = recording(s.platform.db);
  const { store, runner } = await ownWorker(t, recorder.db);
  t.ok(recorder.statements.some((q) => /^SELECT pg_advisory_xact_lock/i.test(q)), 'a pass that reads the checkpoints takes the lock first');

  recorder.statements.length = 0;
  const [event] = await note(store);
  await runner.catchUp(event!.position);
  t.equal(runner.projectedPosition, event!.position, 'the pass folded the new event');
  t.equal(runner.lastError, undefined, 'no failed pass');
  t.same(recorder.statements.filter((q) => /pg_advisory_xact_lock/i.test(q)), [], 'no statement of its own for the lock');
  // claim_checkpoints (migration 0240) takes the lock, then moves the checkpoints.
  t.equal(recorder.statements.filter((q) => /^select claim_checkpoints\(/i.test(q)).length, 1, 'the checkpoint claim takes it');
  const checkpoints = await s.platform.db.selectFrom('checkpoints').select('position').execute();
  t.ok(checkpoints.every((c) => Number(c.position) === event!.position), 'every checkpoint moved');
});

t.test('a live pass waits for the worker holding the lock, and starts again from where that one left the checkpoints', { skip: !process.env.TEST_DATABASE_URL && 'needs a second connection: PostgreSQL' }, async (t) => {
  const s = await startTestServer(t);
  s.platform.projections.stop();
  const { store, runner } = await ownWorker(t, s.platform.db);
  const before = runner.projectedPosition;

  // Another worker holds the lock, as a process folding the same events would.
  const other = new pg.Client({ connectionString: s.platform.config.databaseUrl });
  await other.connect();
  t.teardown(() => other.end());
  await other.query('BEGIN');
  await other.query('SELECT pg_advisory_xact_lock($1)', [PROJECTION_LOCK_KEY]);

  const [event] = await note(store);
  let done = false;
  const pass = runner.catchUp(event!.position).then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.notOk(done, 'the pass waits for the lock');
  t.equal(runner.projectedPosition, before, 'and has not moved');
  const { rows } = await other.query<{ position: string }>('SELECT position FROM checkpoints');
  t.ok(rows.every((r) => Number(r.position) === before), 'nor has it moved a checkpoint');

  // The other worker folds the event (nothing folds a TestNote) and commits.
  await other.query('UPDATE checkpoints SET position = $1', [event!.position]);
  await other.query('COMMIT');
  await pass;
  t.equal(runner.lastError, undefined, 'no failed pass');
  t.equal(runner.projectedPosition, event!.position, 'the pass learnt where the checkpoints stand');

  const [next] = await note(store);
  await runner.catchUp(next!.position);
  const after = await s.platform.db.selectFrom('checkpoints').select('position').execute();
  t.ok(after.every((c) => Number(c.position) === next!.position), 'and keeps folding from there');
});

t.test('events committed while a pass folds join it when they are at least as many', { skip: !process.env.TEST_DATABASE_URL && 'commits during a pass need a second connection: PostgreSQL' }, async (t) => {
  const s = await startTestServer(t);
  s.platform.projections.stop();
  const { db } = s.platform;
  const head = (await s.platform.store.head()).position;
  await db.insertInto('checkpoints').values({ name: 'test-joiner', position: head, version: 1 }).execute();
  // Folding a note marked `crowd` commits two more notes, as a crowd of requests would meanwhile.
  let store: EventStore | undefined;
  const joiner: Projection = {
    name: 'test-joiner', version: 1, tables: [], handles: new Set(['TestNote']),
    apply: async (_trx, event) => {
      if ((event.data as { crowd?: boolean }).crowd) await Promise.all([note(store!), note(store!)]);
      return false;
    },
  };
  const recorder = recording(db);
  const worker = await ownWorker(t, recorder.db, [...allProjections, joiner]);
  store = worker.store;
  recorder.statements.length = 0;
  const [first] = await note(store, { crowd: true });
  await worker.runner.catchUp(first!.position);
  const last = (await s.platform.store.head()).position;
  t.equal(last, first!.position + 2, 'the crowd committed during the pass');
  t.equal(worker.runner.projectedPosition, last, 'one pass folded the note and the crowd');
  t.equal(recorder.statements.filter((q) => /^select claim_checkpoints\(/i.test(q)).length, 2, 'the checkpoints moved for the note, then for the crowd');
  t.equal(worker.runner.lastError, undefined, 'no failed pass');
  const checkpoints = await db.selectFrom('checkpoints').select('position').execute();
  t.ok(checkpoints.every((c) => Number(c.position) === last), 'every checkpoint moved with it');
});
