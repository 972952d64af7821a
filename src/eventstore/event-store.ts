import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
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

/** Serializes appenders across every process sharing the database (property 2 in ARCHITECTURE.md). */
export const APPEND_LOCK_KEY = 7_340_001;
const MAX_BATCH_EVENTS = 2_000;

/** The last two, recorded_at and the hash version, are one value for the whole batch (migrations/0160). */
const APPEND_PARAM_TYPES = ['bigint', 'int[]', 'text[]', 'int[]', 'uuid[]', 'text[]', 'int[]', 'jsonb[]', 'jsonb[]', 'text[]', 'timestamptz', 'smallint'];
/** A batch of one event goes to append_event (migrations/0080, 0160), the same with scalar parameters. */
const APPEND_ONE_PARAM_TYPES = APPEND_PARAM_TYPES.map((type) => type.replace('[]', ''));
const callText = (fn: string, types: readonly string[]) => `SELECT * FROM ${fn}(${types.map((type, i) => `$${i + 1}::${type}`).join(', ')})`;
const APPEND_CALL = { name: 'append_events', text: callText('append_events', APPEND_PARAM_TYPES), types: APPEND_PARAM_TYPES };
const APPEND_ONE_CALL = { name: 'append_event', text: callText('append_event', APPEND_ONE_PARAM_TYPES), types: APPEND_ONE_PARAM_TYPES };

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
    // Data keys are created per request, before it queues: their INSERTs run side by side instead
    // of adding a round trip to the serialized batch commit (which only checks they are cached).
    if (this.crypto) return this.crypto.prepare(appends).then(() => this.enqueue(appends, metadataJson, dataJson));
    return this.enqueue(appends, metadataJson, dataJson);
  }

  private enqueue(appends: readonly StreamAppend[], metadataJson: string, dataJson: string[]): Promise<StoredEvent[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ appends, metadataJson, dataJson, resolve, reject });
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
    const columns = {
      request: [] as number[], stream: [] as string[], expected: [] as Array<number | null>, eventId: [] as string[],
      type: [] as string[], schema: [] as number[], data: [] as string[], meta: [] as string[], digest: [] as string[],
    };
    const pending: Array<Array<Omit<StoredEvent, 'position' | 'stream_version' | 'hash'>>> = [];
    /** The callers' own (plaintext) data of each sealed event, keyed by event id. */
    const plain = new Map<string, Record<string, unknown>>();
    if (this.crypto) await this.crypto.prepare(batch.flatMap((request) => request.appends));
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
          const sealed = this.crypto ? this.crypto.seal(event.type, event.data, eventId) : event.data;
          const dataJson = sealed === event.data ? plainJson : jsonText(sealed);
          if (sealed !== event.data) plain.set(eventId, JSON.parse(plainJson) as Record<string, unknown>);
          const fields = {
            event_id: eventId,
            stream_id: append.streamId,
            type: event.type,
            schema_version: event.schemaVersion ?? currentSchemaVersion(event.type),
            data: JSON.parse(dataJson) as Record<string, unknown>,
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
    const rows = columns.request.length === 1
      ? await this.callAppend(APPEND_ONE_CALL, [APPEND_LOCK_KEY, ...values.map((column) => column[0]), recordedAt, CURRENT_HASH_VERSION])
      : await this.callAppend(APPEND_CALL, [APPEND_LOCK_KEY, ...values, recordedAt, CURRENT_HASH_VERSION]);
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
      (outcomes[r] as StoredEvent[]).push(own ? { ...stored, data: own } : stored);
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

  private async callAppend(call: typeof APPEND_CALL, values: unknown[]): Promise<AppendRow[]> {
    if (this.namedQuery) return this.namedQuery<AppendRow>(call.name, call.text, values);
    const { rows } = await sql<AppendRow>`SELECT * FROM ${sql.raw(call.name)}(${sql.join(values.map((v, i) => sql`${v}::${sql.raw(call.types[i]!)}`))})`.execute(this.db);
    return rows;
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
