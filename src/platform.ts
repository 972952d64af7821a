import type { Config } from './config.js';
import type { Db } from './db/database.js';
import { openDatabase, rememberMemoryTemplate, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { EventStore } from './eventstore/event-store.js';
import type { Bus } from './bus/bus.js';
import { InProcessBus } from './bus/in-process-bus.js';
import { NatsBus } from './bus/nats-bus.js';
import { logHasEvent, readLogId } from './eventstore/log-identity.js';
import { NatsRelay } from './bus/nats-relay.js';
import { ProjectionRunner } from './projection-runner.js';
import type { Projection } from './projections-api.js';
import { CommandRunner } from './commands/command-runner.js';
import type { ServiceContext } from './services/context.js';
import { acquireDataDirLock, type DataDirLock } from './db/data-dir-lock.js';
import { openEventCrypto } from './eventstore/crypto/index.js';
import { KeyRevocationFollower } from './eventstore/crypto/key-revocations.js';
import { HeadSigner, parseSigningKey } from './eventstore/log-signing.js';
import { PresenceTracker } from './services/presence-tracker.js';
import { PresenceSnapshots } from './services/presence-snapshot.js';
import { PresenceBodies } from './services/presence-body.js';

/** Storage, log, bus and projection workers, wired once per process. */
export interface Platform extends ServiceContext {
  database: DatabaseHandle;
  projections: ProjectionRunner;
  relay?: NatsRelay;
  close(): Promise<void>;
}

export interface PlatformOptions {
  projections: readonly Projection[];
  /** Embedded database in memory instead of DATA_DIR (tests). */
  inMemory?: boolean;
  /** Run the projection workers and relay (false for one-shot CLI commands). */
  startWorkers?: boolean;
}

/** How long a start waits for NATS to answer before going on without it (it connects later). */
const NATS_START_WAIT_MS = 3_000;

/**
 * The bus for this database's log. A stream that holds another log refuses the start loudly; if
 * NATS is not reachable yet, the same check runs when it connects (and the bus then stays unused).
 */
async function connectNats(url: string, stream: string, db: Db): Promise<NatsBus> {
  const logId = await readLogId(db);
  const bus = new NatsBus(url, stream, { logId, hasEvent: (eventId) => logHasEvent(db, eventId) });
  await bus.waitConnected(NATS_START_WAIT_MS);
  if (bus.refusal) {
    await bus.close();
    throw new Error(bus.refusal);
  }
  return bus;
}

export async function createPlatform(config: Config, options: PlatformOptions): Promise<Platform> {
  let lock: DataDirLock | undefined;
  if (!config.databaseUrl && !options.inMemory) lock = acquireDataDirLock(config.dataDir);
  let database: DatabaseHandle;
  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: options.inMemory ? undefined : config.dataDir });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = database.db;
  if (!database.fromMigratedTemplate) await migrateToLatest(db);
  if (options.inMemory) await rememberMemoryTemplate(database);
  const store = new EventStore(db, database.namedQuery);
  let bus: Bus;
  try {
    store.crypto = await openEventCrypto(db, config, options.inMemory === true);
    if (config.logSigningKey) store.signer = new HeadSigner(db, parseSigningKey(config.logSigningKey), await readLogId(db));
    bus = config.natsUrl ? await connectNats(config.natsUrl, config.natsStream, db) : new InProcessBus();
  } catch (error) {
    await database.close();
    lock?.release();
    throw error;
  }
  const projections = new ProjectionRunner(db, store, options.projections, bus, { readAhead: database.kind === 'postgres' });
  const commands = new CommandRunner(db, store, projections);
  database.onConnectionLost(() => projections.resync());
  let relay: NatsRelay | undefined;
  let revocations: KeyRevocationFollower | undefined;
  if (options.startWorkers !== false) {
    await projections.start();
    if (bus.kind === 'nats') {
      relay = new NatsRelay(db, store, bus, database.kind === 'pglite');
      store.onCommit((head) => relay!.kick(head));
      // A lost connection may be the one holding the relay lock (the database released it with the connection).
      database.onConnectionLost(() => void relay!.stepDown());
      bus.onWake((signal) => signal.kind === 'appended' && relay!.kick(signal.position));
      relay.kick();
    }
    // Other processes learn of new events through the bus.
    store.onCommit((head) => bus.publishWake({ kind: 'appended', position: head }));
    // Replicas share the database: each forgets the keys another one destroyed (docs/FORGETTING.md).
    if (database.kind === 'postgres' && store.crypto) {
      revocations = new KeyRevocationFollower(db, store.crypto);
      await revocations.start();
      const follower = revocations;
      // This process's own shreds evicted their keys when it destroyed them.
      bus.onWake((signal) => signal.kind === 'appended' && signal.remote === true && void follower.kick());
    }
  }
  const presence = { tracker: new PresenceTracker(db), snapshots: new PresenceSnapshots(db, (tables) => projections.tablesVersion(tables)), bodies: new PresenceBodies() };
  if (options.startWorkers !== false) presence.tracker.start();
  return {
    config,
    db,
    store,
    bus,
    commands,
    database,
    projections,
    relay,
    projectedPosition: () => projections.projectedPosition,
    waitForProjections: (position, timeoutMs) => projections.waitFor(position, timeoutMs),
    tablesVersion: (tables) => projections.tablesVersion(tables),
    presence,
    async close() {
      // The last second of pings reaches the table before the database goes.
      await presence.tracker.close().catch((error) => console.error(`presence: pending last-seen times not written: ${String(error)}`));
      projections.stop();
      await relay?.stop();
      revocations?.stop();
      // The ranges this process appended last are signed before the database goes.
      await store.signer?.flush();
      await bus.close();
      await database.close();
      lock?.release();
    },
  };
}
