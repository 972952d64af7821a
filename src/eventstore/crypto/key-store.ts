import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { KEK_FORMAT, unwrapWithKek, wrapWithKek } from './kek.js';
import type { KeyScope } from './personal-fields.js';
import { FifoCache } from './fifo-cache.js';
import { randomSlice } from './random-pool.js';

const CACHE_LIMIT = 200_000;

/** A data key made by this process whose row is not stored yet: it goes in with the events sealed under it. */
export interface MintedKey {
  readonly scope: KeyScope;
  readonly key: Buffer;
  readonly format: number;
  readonly wrapped: string;
}
const keyLabel = (keyId: string) => `data-key:${keyId}`;

/**
 * The data keys: one per message (later per person and per upload), each wrapped by the KEK in
 * data_keys. Unwrapped keys are cached; a key missing from the table was destroyed (keys are
 * written before any event that uses them), and that answer is cached too until forget() or a
 * restart.
 */
export class DataKeyStore {
  /** key id → key, or null once known destroyed; the oldest go first. */
  private cache = new FifoCache<string, Buffer | null>(CACHE_LIMIT);

  constructor(
    private readonly db: Db,
    private readonly kek: Buffer,
  ) {}

  cached(keyId: string): Buffer | null | undefined {
    return this.cache.get(keyId);
  }

  private remember(keyId: string, key: Buffer | null): void {
    this.cache.set(keyId, key);
  }

  /**
   * Counts forget() calls: a reader holding views opened with keys (EventCrypto) drops them when it
   * changes, so a destroyed key's plaintext is not served from such a view either.
   */
  generation = 0;

  /**
   * A fresh key for a subject that has none yet (a message being sent), not stored: the caller
   * writes its row in the transaction that appends the events sealed under it (EventStore), so a
   * send costs no statement of its own, and adopt()s it once that committed.
   */
  mint(scope: KeyScope): MintedKey {
    const key = randomSlice(32);
    return { scope, key, format: KEK_FORMAT, wrapped: wrapWithKek(this.kek, keyLabel(scope.keyId), key) };
  }

  /** Minted keys whose rows committed: cached like any stored key. */
  adopt(keys: Iterable<MintedKey>): void {
    for (const minted of keys) this.remember(minted.scope.keyId, minted.key);
  }

  /** Keys for `scopes`, created where missing (one round trip for the whole batch of appends). */
  async ensure(scopes: readonly KeyScope[], db: Db = this.db): Promise<void> {
    const missing = new Map<string, KeyScope>();
    for (const scope of scopes) if (!this.cache.get(scope.keyId)) missing.set(scope.keyId, scope);
    if (missing.size === 0) return;
    const fresh = [...missing.values()].map((scope) => {
      const key = randomSlice(32);
      return { scope, key, wrapped: wrapWithKek(this.kek, keyLabel(scope.keyId), key) };
    });
    // An existing key wins (a retried command, or an edit of an older message): those are read back.
    const { rows } = await sql<{ key_id: string }>`INSERT INTO data_keys (key_id, scope, subject, format, wrapped)
      VALUES ${sql.join(fresh.map((f) => sql`(${f.scope.keyId}, ${f.scope.scope}, ${f.scope.subject}, ${KEK_FORMAT}, ${f.wrapped})`))}
      ON CONFLICT (key_id) DO NOTHING RETURNING key_id`.execute(db);
    const inserted = new Set(rows.map((row) => row.key_id));
    for (const f of fresh) if (inserted.has(f.scope.keyId)) this.remember(f.scope.keyId, f.key);
    await this.load([...missing.keys()].filter((id) => !inserted.has(id)), db, true);
    for (const id of missing.keys()) {
      if (!this.cache.get(id)) throw new Error(`data key ${id} could not be stored`);
    }
  }

  /** Loads the keys not yet cached; `reload` re-reads even cached ones. */
  async load(keyIds: readonly string[], db: Db = this.db, reload = false): Promise<void> {
    const wanted = [...new Set(keyIds)].filter((id) => reload || !this.cache.has(id));
    if (wanted.length === 0) return;
    const { rows } = await sql<{ key_id: string; format: number; wrapped: string }>`
      SELECT key_id, format, wrapped FROM data_keys WHERE key_id = ANY(${wanted}::text[])`.execute(db);
    const found = new Map(rows.map((row) => [row.key_id, row]));
    for (const id of wanted) {
      const row = found.get(id);
      this.remember(id, row ? this.unwrap(row.format, id, row.wrapped) : null);
    }
  }

  private unwrap(format: number, keyId: string, wrapped: string): Buffer {
    if (format !== KEK_FORMAT) throw new Error(`data key ${keyId} has format ${format}, which this server cannot unwrap`);
    try {
      return unwrapWithKek(this.kek, keyLabel(keyId), wrapped);
    } catch {
      throw new Error(`data key ${keyId} does not unwrap with this key-encryption key (keys imported from another server need that server's DATA_KEY_SECRET)`);
    }
  }

  /** Destroys keys: after this (and the VACUUM the caller may run) nothing they sealed can be read. */
  async destroy(keyIds: readonly string[], db: Db = this.db): Promise<number> {
    if (keyIds.length === 0) return 0;
    const { numAffectedRows } = await sql`DELETE FROM data_keys WHERE key_id = ANY(${[...keyIds]}::text[])`.execute(db);
    this.forget(keyIds);
    return Number(numAffectedRows ?? 0);
  }

  /** Drops cached keys another process destroyed (it appended the shred event we just read). */
  forget(keyIds: readonly string[]): void {
    if (keyIds.length === 0) return;
    for (const id of keyIds) this.cache.set(id, null);
    this.generation += 1;
  }
}
