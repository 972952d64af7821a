import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import type { Db, NamedQuery } from '../db/database.js';
import { bodyDigest, CURRENT_HASH_VERSION, GENESIS_HASH } from './hash.js';
import { nextRecordedAt } from './recorded-at.js';
import type { HeadSigner } from './log-signing.js';
import {
  EVENT_COLUMNS,
  StreamVersionConflict,
  type EventMetadata,
  type StoredEvent,
  type StreamAppend,
} from './types.js';
import { currentSchemaVersion, upcast } from './upcast.js';
import { RecentCommits } from './recent-commits.js';
import { serializeEventData } from './event-limits.js';
import { jsonText } from './json-text.js';
import type { EventCrypto } from './crypto/event-crypto.js';
import type { MintedKey } from './crypto/key-store.js';

/** Serializes appenders across every process sharing the database (property 2 in ARCHITECTURE.md). */
export const APPEND_LOCK_KEY = 7_340_001;
const MAX_BATCH_EVENTS = 2_000;
/** Events openInSlices decrypts between two turns of the event loop (some milliseconds of work). */
const OPEN_SLICE = 250;

/** The last two, recorded_at and the hash version, are one value for the whole batch (migrations/0160). */
const APPEND_PARAM_TYPES = ['bigint', 'int[]', 'text[]', 'int[]', 'uuid[]', 'text[]', 'int[]', 'jsonb[]', 'jsonb[]', 'text[]', 'timestamptz', 'smallint'];
/** A batch of one event goes to append_event (migrations/0080, 0160), the same with scalar parameters. */
const APPEND_ONE_PARAM_TYPES = APPEND_PARAM_TYPES.map((type) => type.replace('[]', ''));
const callText = (fn: string, types: readonly string[]) => `SELECT * FROM ${fn}(${types.map((type, i) => `$${i + 1}::${type}`).join(', ')})`;
const APPEND_CALL = { name: 'append_events', text: callText('append_events', APPEND_PARAM_TYPES), types: APPEND_PARAM_TYPES };
const APPEND_ONE_CALL = { name: 'append_event', text: callText('append_event', APPEND_ONE_PARAM_TYPES), types: APPEND_ONE_PARAM_TYPES };
type AppendCall = typeof APPEND_CALL;
/**
 * `call` with the rows of the data keys minted for the batch (EventCrypto.mint) inserted by the
 * same statement: a key and the events sealed under it commit together, in one round trip. A key
 * that exists already fails the whole statement on its primary key (see commitBatch).
 */
const KEY_PARAM_TYPES = ['text[]', 'text[]', 'text[]', 'int[]', 'text[]'];
const withMintedKeys = (call: AppendCall): AppendCall => ({
  name: `${call.name}_with_keys`,
  text: `WITH minted AS (INSERT INTO data_keys (key_id, scope, subject, format, wrapped) SELECT * FROM unnest(${KEY_PARAM_TYPES.map((type, i) => `$${call.types.length + i + 1}::${type}`).join(', ')}))
    ${call.text}`,
  types: [...call.types, ...KEY_PARAM_TYPES],
});
const APPEND_WITH_KEYS_CALL = withMintedKeys(APPEND_CALL);
// A lone sent message (most sends on a quiet server) keeps append_event's scalar parameters.
const APPEND_ONE_WITH_KEYS_CALL = withMintedKeys(APPEND_ONE_CALL);

/** One row per committed event, or one per refused request (`ok` false, `out_hash` naming the stream). */
interface AppendRow {
  request: number;
  ok: boolean;
  out_position: number | null;
  out_version: number | null;
  out_hash: string;
  actual: number | null;
}

interface PendingAppend {
  appends: readonly StreamAppend[];
  metadataJson: string;
  /** Each event's data as JSON text, in the order of `appends` and their events. */
  dataJson: string[];
  /** Keys minted for this request (key id → key), stored by the statement that appends it. */
  minted: Map<string, MintedKey>;
  resolve(events: StoredEvent[]): void;
  reject(error: unknown): void;
}

/** `count`: events this batch committed (the metrics' append counter). */
type Listener = (head: number, count: number) => void;

/**
 * The append-only log. Concurrent appends are grouped into one transaction (group commit): while
 * one batch commits, new requests queue up and go together in the next. Inside the transaction an
 * advisory lock makes positions follow commit order, and the hash chain continues from the head.
 */
export class EventStore {
  private pending: PendingAppend[] = [];
  private flushing = false;
  private listeners: Listener[] = [];
  /** The last error a commit listener threw (they are notifications; the append stands). */
  listenerError: unknown;
  /** What this process committed last, for readers that follow the log (see RecentCommits). */
  readonly recent = new RecentCommits();
  /** Seals personal fields on append and opens them on read (docs/FORGETTING.md); unset: plaintext. */
  crypto?: EventCrypto;
  /** Signs each committed batch's range with a key the database never holds (log-signing.ts); unset: unsigned. */
  signer?: HeadSigner;

  /** `namedQuery`, when the backend has one, lets PostgreSQL plan the append call once per connection. */
  constructor(
    private readonly db: Db,
    private readonly namedQuery?: NamedQuery,
  ) {}

  /** Appends atomically to one or more streams; resolves with the stored events once committed. */
  append(appends: readonly StreamAppend[], metadata: EventMetadata): Promise<StoredEvent[]> {
    let metadataJson: string;
    let dataJson: string[];
    try {
      // Refused here, before it can join a batch, an event too deep or too large for the log.
      metadataJson = serializeEventData('metadata', metadata, 0);
      const metadataBytes = Buffer.byteLength(metadataJson);
      dataJson = appends.flatMap((append) => append.events.map((event) => serializeEventData(event.type, event.data, metadataBytes)));
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.crypto) {
      // A new subject's key is minted here and stored with the append. Other keys missing from the
      // cache are created or loaded per request, before it queues: their statements run side by side
      // instead of adding a round trip to the serialized batch commit (which only checks they are cached).
      let minted: Map<string, MintedKey>;
      try {
        minted = this.crypto.mint(appends);
      } catch (error) {
        return Promise.reject(error);
      }
      return this.crypto.prepare(appends, undefined, minted).then(() => this.enqueue(appends, metadataJson, dataJson, minted));
    }
    return this.enqueue(appends, metadataJson, dataJson, new Map());
  }

  private enqueue(appends: readonly StreamAppend[], metadataJson: string, dataJson: string[], minted: Map<string, MintedKey>): Promise<StoredEvent[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ appends, metadataJson, dataJson, minted, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Called with the new head after every committed batch of this process. */
  onCommit(listener: Listener): void {
    this.listeners.push(listener);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.takeBatch();
        try {
          await this.commitBatch(batch);
        } catch (error) {
          // One bad request must not fail its neighbours: retry each alone.
          if (batch.length === 1) batch[0]!.reject(error);
          else for (const request of batch) await this.commitBatch([request]).catch(request.reject);
        }
        // Let the callers just answered run to their next append, so it joins the next batch
        // instead of trailing behind it in a batch of its own.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.flushing = false;
    }
  }

  private takeBatch(): PendingAppend[] {
    const batch: PendingAppend[] = [];
    let size = 0;
    while (this.pending.length > 0 && (batch.length === 0 || size < MAX_BATCH_EVENTS)) {
      const next = this.pending.shift()!;
      batch.push(next);
      size += next.appends.reduce((n, a) => n + a.events.length, 0);
    }
    return batch;
  }

  private async commitBatch(batch: PendingAppend[]): Promise<void> {
    try {
      await this.commitBatchOnce(batch);
    } catch (error) {
      if (!isMintedKeyConflict(error) || !batch.some((request) => request.minted.size > 0)) throw error;
      // A minted key's subject had a key after all (a retried command): nothing was committed. The
      // batch goes again with the keys created or read back as any other (ON CONFLICT, then loaded).
      for (const request of batch) request.minted.clear();
      await this.commitBatchOnce(batch);
    }
  }

  private async commitBatchOnce(batch: PendingAppend[]): Promise<void> {
    const columns = {
      request: [] as number[], stream: [] as string[], expected: [] as Array<number | null>, eventId: [] as string[],
      type: [] as string[], schema: [] as number[], data: [] as string[], meta: [] as string[], digest: [] as string[],
    };
    const pending: Array<Array<Omit<StoredEvent, 'position' | 'stream_version' | 'hash'>>> = [];
    /** The callers' own (plaintext) data of each sealed event, keyed by event id. */
    const plain = new Map<string, Record<string, unknown>>();
    // A key destroyed while this batch commits makes its plaintext views stale (rememberOpened below).
    const keyGeneration = this.crypto?.keys.generation;
    const minted = new Map<string, MintedKey>();
    for (const request of batch) for (const [keyId, key] of request.minted) minted.set(keyId, key);
    if (this.crypto) await this.crypto.prepare(batch.flatMap((request) => request.appends), undefined, minted);
    // One recorded_at per batch, chosen here because the hash covers it (recorded-at.ts).
    const recordedAt = nextRecordedAt();
    batch.forEach((request, r) => {
      // Stored values are what JSON keeps of the caller's objects, so the hash covers exactly what a reader gets back.
      const { metadataJson } = request;
      const metadata = JSON.parse(metadataJson) as EventMetadata;
      let next = 0;
      const events: Array<Omit<StoredEvent, 'position' | 'stream_version' | 'hash'>> = [];
      for (const append of request.appends) {
        const expected = append.expectedVersion === undefined ? null : append.expectedVersion === -1 ? 0 : append.expectedVersion;
        for (const event of append.events) {
          const plainJson = request.dataJson[next++]!;
          const eventId = randomUUID();
          const plainData = JSON.parse(plainJson) as Record<string, unknown>;
          // Sealed from what JSON keeps of the caller's data, the sealed form is itself plain JSON
          // data: stored as it is, with no second parse (it shares its unsealed members with the view).
          const sealed = this.crypto ? this.crypto.seal(event.type, plainData, eventId, request.minted) : plainData;
          const dataJson = sealed === plainData ? plainJson : jsonText(sealed);
          if (sealed !== plainData) plain.set(eventId, plainData);
          const fields = {
            event_id: eventId,
            stream_id: append.streamId,
            type: event.type,
            schema_version: event.schemaVersion ?? currentSchemaVersion(event.type),
            data: sealed,
            metadata,
          };
          events.push(fields);
          columns.request.push(r);
          columns.stream.push(append.streamId);
          columns.expected.push(expected);
          columns.eventId.push(fields.event_id);
          columns.type.push(fields.type);
          columns.schema.push(fields.schema_version);
          columns.data.push(dataJson);
          columns.meta.push(metadataJson);
          columns.digest.push(bodyDigest({ ...fields, hash_version: CURRENT_HASH_VERSION, recorded_at: recordedAt }));
        }
      }
      pending.push(events);
    });
    const values = [
      columns.request, columns.stream, columns.expected, columns.eventId, columns.type,
      columns.schema, columns.data, columns.meta, columns.digest,
    ];
    const keys = [...minted.values()];
    const one = columns.request.length === 1;
    const call = keys.length > 0 ? (one ? APPEND_ONE_WITH_KEYS_CALL : APPEND_WITH_KEYS_CALL) : one ? APPEND_ONE_CALL : APPEND_CALL;
    const keyValues = keys.length > 0
      ? [keys.map((k) => k.scope.keyId), keys.map((k) => k.scope.scope), keys.map((k) => k.scope.subject), keys.map((k) => k.format), keys.map((k) => k.wrapped)]
      : [];
    const rows = await this.callAppend(call, [APPEND_LOCK_KEY, ...(one ? values.map((column) => column[0]) : values), recordedAt, CURRENT_HASH_VERSION, ...keyValues]);
    // Stored, even for a request refused on its stream version (the statement committed).
    this.crypto?.keys.adopt(keys);
    const outcomes = batch.map((): StoredEvent[] | StreamVersionConflict => []);
    const cursor = batch.map(() => 0);
    let head = 0;
    let headHash = '';
    let first = Infinity;
    let count = 0;
    const committed: StoredEvent[] = [];
    for (const row of rows) {
      const r = row.request;
      if (!row.ok) {
        const expected = batch[r]!.appends.find((a) => a.streamId === row.out_hash)?.expectedVersion ?? 0;
        outcomes[r] = new StreamVersionConflict(row.out_hash, expected === -1 ? 0 : expected, row.actual ?? 0);
        continue;
      }
      const event = pending[r]![cursor[r]!++]!;
      const position = Number(row.out_position);
      if (position > head) {
        head = position;
        headHash = row.out_hash;
      }
      first = Math.min(first, position);
      count += 1;
      const stored: StoredEvent = { ...event, position, stream_version: Number(row.out_version), hash: row.out_hash };
      const own = plain.get(stored.event_id);
      const view = own ? { ...stored, data: own } : stored;
      if (own && this.crypto?.keys.generation === keyGeneration) this.crypto?.rememberOpened(stored, view);
      (outcomes[r] as StoredEvent[]).push(view);
      committed.push(stored);
    }
    this.recent.add(committed);
    batch.forEach((request, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof StreamVersionConflict) request.reject(outcome);
      else request.resolve(outcome);
    });
    // Accepted events of one call take consecutive positions: the range is exactly this batch.
    if (head > 0) this.signer?.add(first, head, headHash);
    if (head > 0) this.notify(head, count);
  }

  /**
   * The batch is committed and answered: a listener that throws must not reach flush(), whose
   * retry-each-alone path would append the batch a second time.
   */
  private notify(head: number, count: number): void {
    for (const listener of this.listeners) {
      try {
        listener(head, count);
      } catch (error) {
        this.listenerError = error;
      }
    }
  }

  private async callAppend(call: AppendCall, values: unknown[]): Promise<AppendRow[]> {
    if (this.namedQuery) return this.namedQuery<AppendRow>(call.name, call.text, values);
    // The embedded database has no named statements: the same text, with the same parameters.
    return (await this.db.executeQuery<AppendRow>(CompiledQuery.raw(call.text, values))).rows;
  }

  /** Events after `afterPosition`, in global order, upcast to their current schema. */
  async readAll(afterPosition: number, limit = 1_000, db: Db = this.db): Promise<StoredEvent[]> {
    return this.open(await this.readAllStored(afterPosition, limit, db), db);
  }

  /** readAll without opening sealed values: the log exactly as stored (the NATS relay publishes this). */
  async readAllStored(afterPosition: number, limit = 1_000, db: Db = this.db): Promise<StoredEvent[]> {
    const rows = await db
      .selectFrom('events')
      .select([...EVENT_COLUMNS])
      .where('position', '>', afterPosition)
      .orderBy('position')
      .limit(limit)
      .execute();
    return rows.map((row) => upcast(row as unknown as StoredEvent));
  }

  /**
   * readAll for a reader following the log closely: what this process committed itself comes from
   * memory (RecentCommits), anything else from `db`.
   */
  async readNext(afterPosition: number, limit: number, db: Db = this.db): Promise<StoredEvent[]> {
    const recent = this.recent.after(afterPosition, limit)?.map(upcast);
    return recent ? this.open(recent, db) : this.readAll(afterPosition, limit, db);
  }

  /** readNext without opening sealed values (see readAllStored). */
  async readNextStored(afterPosition: number, limit: number, db: Db = this.db): Promise<StoredEvent[]> {
    return this.recent.after(afterPosition, limit)?.map(upcast) ?? this.readAllStored(afterPosition, limit, db);
  }

  /** Personal values decrypted, or shredded where their key is gone. */
  open(events: StoredEvent[], db: Db = this.db): Promise<StoredEvent[]> | StoredEvent[] {
    return this.crypto ? this.crypto.openEvents(events, db) : events;
  }

  /**
   * open() a slice at a time, giving the event loop back between slices: a reader that opens the
   * next page while it writes the current one (a rebuild) then decrypts while the database works on
   * its statements, instead of holding their answers back for one long run of decryption.
   */
  async openInSlices(events: StoredEvent[], slice = OPEN_SLICE): Promise<StoredEvent[]> {
    if (!this.crypto || events.length <= slice) return this.open(events);
    const out: StoredEvent[] = [];
    for (let start = 0; start < events.length; start += slice) {
      for (const event of await this.crypto.openEvents(events.slice(start, start + slice))) out.push(event);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return out;
  }

  /** Events of `types` with `after < position <= upTo`, in global order, at most `limit`. */
  async readRange(after: number, upTo: number, types: readonly string[], limit = 1_000): Promise<StoredEvent[]> {
    const recent = this.recent.range(after, upTo);
    if (recent) {
      const wanted = new Set(types);
      return this.open(recent.filter((event) => wanted.has(event.type)).slice(0, limit).map(upcast));
    }
    const rows = await this.db
      .selectFrom('events')
      .select([...EVENT_COLUMNS])
      .where('position', '>', after)
      .where('position', '<=', upTo)
      .where('type', 'in', [...types])
      .orderBy('position')
      .limit(limit)
      .execute();
    return this.open(rows.map((row) => upcast(row as unknown as StoredEvent)));
  }

  async readStream(streamId: string, afterVersion = 0): Promise<StoredEvent[]> {
    const rows = await this.db
      .selectFrom('events')
      .select([...EVENT_COLUMNS])
      .where('stream_id', '=', streamId)
      .where('stream_version', '>', afterVersion)
      .orderBy('stream_version')
      .execute();
    return this.open(rows.map((row) => upcast(row as unknown as StoredEvent)));
  }

  async head(): Promise<{ position: number; hash: string }> {
    const row = await this.db
      .selectFrom('events')
      .select(['position', 'hash'])
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ?? { position: 0, hash: GENESIS_HASH };
  }
}

/** The append statement failed because a minted data key's id exists already (its primary key). */
function isMintedKeyConflict(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown; message?: unknown };
  return e?.code === '23505' && (e.constraint === 'data_keys_pkey' || (typeof e.message === 'string' && e.message.includes('data_keys_pkey')));
}
