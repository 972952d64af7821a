import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { chainHash, GENESIS_HASH } from './hash.js';
import {
  StreamVersionConflict,
  type EventMetadata,
  type StoredEvent,
  type StreamAppend,
} from './types.js';
import { upcast } from './upcast.js';

/** Serializes appenders across every process sharing the database (property 2 in ARCHITECTURE.md). */
export const APPEND_LOCK_KEY = 7_340_001;
const MAX_BATCH_EVENTS = 2_000;

interface PendingAppend {
  appends: readonly StreamAppend[];
  metadata: EventMetadata;
  resolve(events: StoredEvent[]): void;
  reject(error: unknown): void;
}

type Listener = (head: number) => void;

/**
 * The append-only log. Concurrent appends are grouped into one transaction (group commit): while
 * one batch commits, new requests queue up and go together in the next. Inside the transaction an
 * advisory lock makes positions follow commit order, and the hash chain continues from the head.
 */
export class EventStore {
  private pending: PendingAppend[] = [];
  private flushing = false;
  private listeners: Listener[] = [];

  constructor(private readonly db: Db) {}

  /** Appends atomically to one or more streams; resolves with the stored events once committed. */
  append(appends: readonly StreamAppend[], metadata: EventMetadata): Promise<StoredEvent[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ appends, metadata, resolve, reject });
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
    const outcomes = await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})`.execute(trx);
      const head = await trx
        .selectFrom('events')
        .select(['position', 'hash'])
        .orderBy('position', 'desc')
        .limit(1)
        .executeTakeFirst();
      const streamIds = [...new Set(batch.flatMap((r) => r.appends.map((a) => a.streamId)))];
      const versions = new Map<string, number>();
      if (streamIds.length > 0) {
        const rows = await trx
          .selectFrom('events')
          .select(['stream_id', (eb) => eb.fn.max('stream_version').as('version')])
          .where('stream_id', 'in', streamIds)
          .groupBy('stream_id')
          .execute();
        for (const row of rows) versions.set(row.stream_id, Number(row.version));
      }

      let position = head?.position ?? 0;
      let prevHash = head?.hash ?? GENESIS_HASH;
      const rows: Array<StoredEvent> = [];
      const outcomes: Array<StoredEvent[] | StreamVersionConflict> = [];
      for (const request of batch) {
        const conflict = findConflict(request.appends, versions);
        if (conflict) {
          outcomes.push(conflict);
          continue;
        }
        const stored: StoredEvent[] = [];
        const metadata = JSON.parse(JSON.stringify(request.metadata)) as EventMetadata;
        for (const append of request.appends) {
          let version = versions.get(append.streamId) ?? 0;
          for (const event of append.events) {
            version += 1;
            position += 1;
            const fields = {
              position,
              event_id: randomUUID(),
              stream_id: append.streamId,
              stream_version: version,
              type: event.type,
              schema_version: event.schemaVersion ?? 1,
              data: JSON.parse(JSON.stringify(event.data)) as Record<string, unknown>,
              metadata,
            };
            const hash = chainHash(prevHash, fields);
            prevHash = hash;
            stored.push({ ...fields, hash });
          }
          versions.set(append.streamId, version);
        }
        rows.push(...stored);
        outcomes.push(stored);
      }
      for (let i = 0; i < rows.length; i += 500) {
        await trx
          .insertInto('events')
          .values(
            rows.slice(i, i + 500).map((e) => ({
              position: e.position,
              event_id: e.event_id,
              stream_id: e.stream_id,
              stream_version: e.stream_version,
              type: e.type,
              schema_version: e.schema_version,
              data: JSON.stringify(e.data),
              metadata: JSON.stringify(e.metadata),
              hash: e.hash,
            })),
          )
          .execute();
      }
      return { outcomes, head: position };
    });

    batch.forEach((request, i) => {
      const outcome = outcomes.outcomes[i]!;
      if (outcome instanceof StreamVersionConflict) request.reject(outcome);
      else request.resolve(outcome);
    });
    for (const listener of this.listeners) listener(outcomes.head);
  }

  /** Events after `afterPosition`, in global order, upcast to their current schema. */
  async readAll(afterPosition: number, limit = 1_000): Promise<StoredEvent[]> {
    const rows = await this.db
      .selectFrom('events')
      .select(['position', 'event_id', 'stream_id', 'stream_version', 'type', 'schema_version', 'data', 'metadata', 'hash'])
      .where('position', '>', afterPosition)
      .orderBy('position')
      .limit(limit)
      .execute();
    return rows.map((row) => upcast(row as unknown as StoredEvent));
  }

  async readStream(streamId: string, afterVersion = 0): Promise<StoredEvent[]> {
    const rows = await this.db
      .selectFrom('events')
      .select(['position', 'event_id', 'stream_id', 'stream_version', 'type', 'schema_version', 'data', 'metadata', 'hash'])
      .where('stream_id', '=', streamId)
      .where('stream_version', '>', afterVersion)
      .orderBy('stream_version')
      .execute();
    return rows.map((row) => upcast(row as unknown as StoredEvent));
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

function findConflict(appends: readonly StreamAppend[], versions: Map<string, number>): StreamVersionConflict | undefined {
  for (const append of appends) {
    if (append.expectedVersion === undefined) continue;
    const actual = versions.get(append.streamId) ?? 0;
    const expected = append.expectedVersion === -1 ? 0 : append.expectedVersion;
    if (actual !== expected) return new StreamVersionConflict(append.streamId, expected, actual);
  }
  return undefined;
}
