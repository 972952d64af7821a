import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import { EventCrypto } from './event-crypto.js';
import { loadKek } from './kek.js';
import { DataKeyStore } from './key-store.js';

export { EventCrypto } from './event-crypto.js';
export { SHREDDED } from './envelope.js';
export { KekError } from './kek.js';

/**
 * The KEK (checked against the database) and the event sealing built on it. An in-memory database
 * (tests) without DATA_KEY_SECRET gets a fresh KEK: nothing outlives the process anyway.
 */
export async function openEventCrypto(db: Db, config: Config, inMemory: boolean): Promise<EventCrypto> {
  const kek = await loadKek(db, { secret: config.dataKeySecret, dataDir: inMemory ? undefined : config.dataDir, ephemeral: inMemory });
  kekByDb.set(db, kek.key);
  return new EventCrypto(new DataKeyStore(db, kek.key));
}

const kekByDb = new WeakMap<Db, Buffer>();

/** The KEK a database of this process was opened with (replay hands it to the database it builds). */
export function kekOf(db: Db): Buffer | undefined {
  return kekByDb.get(db);
}
