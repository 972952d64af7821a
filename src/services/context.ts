import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Bus } from '../bus/bus.js';
import type { CommandRunner } from '../commands/command-runner.js';
import type { EventMetadata } from '../eventstore/types.js';
import type { PresenceTracker } from './presence-tracker.js';
import type { PresenceSnapshots } from './presence-snapshot.js';
import type { PresenceBodies } from './presence-body.js';

/** What every service needs: storage, the command runner, and the configuration. */
export interface ServiceContext {
  config: Config;
  db: Db;
  store: EventStore;
  bus: Bus;
  commands: CommandRunner;
  /** Log position the read tables have reached in this process. */
  projectedPosition(): number;
  waitForProjections(position: number, timeoutMs?: number): Promise<boolean>;
  /** Changes whenever rows of `tables` may have changed; key caches of read-table rows on it. */
  tablesVersion(tables: readonly string[]): number;
  /** This process's presence pings (held, written every second) and its shared copies of realm presence. */
  presence: { tracker: PresenceTracker; snapshots: PresenceSnapshots; bodies: PresenceBodies };
}

export interface RequestMeta {
  actorId: number | null;
  realmId: number;
  client: string;
  requestId: string;
  now: Date;
}

export function metadataOf(meta: RequestMeta): EventMetadata {
  return {
    actor_id: meta.actorId,
    realm_id: meta.realmId,
    client: meta.client,
    request_id: meta.requestId,
    time: meta.now.toISOString(),
  };
}
