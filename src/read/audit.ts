import { sql, type SqlBool, type Expression } from 'kysely';
import type { Db } from '../db/database.js';
import { EVENT_COLUMNS, type StoredEvent } from '../eventstore/types.js';

/** Decrypts sealed personal values (EventStore.open); a value whose key was destroyed reads as shredded. */
export type EventOpener = (events: StoredEvent[]) => Promise<StoredEvent[]> | StoredEvent[];
const asStored = (rows: unknown[]) => rows as StoredEvent[];

/** One log entry as the audit API shows it: the envelope as stored (not upcast), secrets redacted. */
export interface AuditEntry {
  position: number;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  hash: string;
}

export interface AuditFilter {
  realmId: number;
  actorId?: number;
  types?: readonly string[];
  streamIds?: readonly string[];
  /** ISO 8601 bounds on metadata.time, both inclusive. */
  since?: string;
  until?: string;
  /** Cursor: only positions above it. */
  after: number;
  /** Inclusive upper bound on the position. */
  maxPosition?: number;
  limit: number;
}

export const REDACTED = '[redacted]';

/**
 * Fields that hold credentials or the means to take over an account: an API key, a password hash,
 * the hash of an email-change confirmation key, a push device token. The audit trail shows that
 * they changed and when, never their values.
 */
const SECRET_FIELDS = new Set(['api_key', 'password_hash', 'password', 'key_hash', 'token']);

/** A copy of `value` with secret fields replaced; iterative, as log data may nest to any depth. */
export function redactSecrets(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const emptyLike = (source: object): Record<string, unknown> => (Array.isArray(source) ? [] : {}) as Record<string, unknown>;
  const root = emptyLike(value);
  const work: Array<{ from: object; to: Record<string, unknown> }> = [{ from: value, to: root }];
  for (let item = work.pop(); item; item = work.pop()) {
    const isArray = Array.isArray(item.from);
    for (const [name, field] of Object.entries(item.from)) {
      let copy: unknown = field;
      if (!isArray && SECRET_FIELDS.has(name) && field !== null) copy = REDACTED;
      else if (field !== null && typeof field === 'object') {
        copy = emptyLike(field);
        work.push({ from: field, to: copy as Record<string, unknown> });
      }
      // defineProperty: a "__proto__" member of parsed JSON stays a member.
      Object.defineProperty(item.to, name, { value: copy, enumerable: true, writable: true, configurable: true });
    }
  }
  return root;
}

/** Streams whose id carries a secret (the email-change request stream is named after the key hash). */
function redactStreamId(streamId: string): string {
  return streamId.startsWith('email-change-') ? `email-change-${REDACTED}` : streamId;
}

/** A stored row has the same fields as an entry; toEntry redacts it. */
type EventRow = AuditEntry;

/** One stored event as the audit shows it: secrets and secret-bearing stream ids redacted. */
export function toEntry(row: EventRow): AuditEntry {
  return {
    position: Number(row.position),
    event_id: row.event_id,
    stream_id: redactStreamId(row.stream_id),
    stream_version: Number(row.stream_version),
    type: row.type,
    schema_version: row.schema_version,
    data: redactSecrets(row.data) as Record<string, unknown>,
    metadata: redactSecrets(row.metadata) as Record<string, unknown>,
    hash: row.hash,
  };
}

const COLUMNS = EVENT_COLUMNS;

/** A page of the log in position order, after `filter.after`, matching every given filter. */
export async function listAuditEvents(db: Db, filter: AuditFilter, open: EventOpener = (events) => events): Promise<AuditEntry[]> {
  let query = db
    .selectFrom('events')
    .select(COLUMNS)
    .where('position', '>', filter.after)
    .where(sql<SqlBool>`(metadata->>'realm_id')::int = ${filter.realmId}`);
  if (filter.maxPosition !== undefined) query = query.where('position', '<=', filter.maxPosition);
  if (filter.actorId !== undefined) query = query.where(sql<SqlBool>`(metadata->>'actor_id')::int = ${filter.actorId}`);
  if (filter.types && filter.types.length > 0) query = query.where('type', 'in', [...filter.types]);
  if (filter.streamIds && filter.streamIds.length > 0) query = query.where('stream_id', 'in', [...filter.streamIds]);
  if (filter.since !== undefined) query = query.where(sql<SqlBool>`(metadata->>'time')::timestamptz >= ${filter.since}::timestamptz`);
  if (filter.until !== undefined) query = query.where(sql<SqlBool>`(metadata->>'time')::timestamptz <= ${filter.until}::timestamptz`);
  const rows = await open(asStored(await query.orderBy('position').limit(filter.limit).execute()));
  return rows.map((row) => toEntry(row as unknown as EventRow));
}

/** Event types that make up a message's life (per-user flags are left out: they are not the message's). */
const MESSAGE_LIFE_TYPES = ['MessageSent', 'MessageEdited', 'MessagesDeleted', 'MessagesShredded', 'ReactionAdded', 'ReactionRemoved'];

export interface MessageLife {
  message_id: number;
  deleted: boolean;
  /** its content was destroyed (crypto-shredding): the entries keep their metadata, never the content */
  shredded: boolean;
  events: AuditEntry[];
}

/**
 * Every event that touched one message, even after its deletion: its own stream (sent, edits,
 * reactions, deletion), plus edits and deletions filed on another message's stream that list it
 * in `message_ids` (a topic move or a topic deletion covers many messages with one event).
 * null when the log never had such a message in this realm.
 */
export async function messageLife(db: Db, realmId: number, messageId: number, open: EventOpener = (events) => events): Promise<MessageLife | null> {
  const asJson = JSON.stringify(messageId);
  const covers: Expression<SqlBool> = sql<SqlBool>`(
    stream_id = ${`message-${messageId}`}
    OR (type IN ('MessageEdited', 'MessagesDeleted', 'MessagesShredded') AND data->'message_ids' @> ${asJson}::jsonb)
    OR (type IN ('ReactionAdded', 'ReactionRemoved') AND data->'message_id' = ${asJson}::jsonb))`;
  const rows = await db
    .selectFrom('events')
    .select(COLUMNS)
    .where('type', 'in', MESSAGE_LIFE_TYPES)
    .where(covers)
    .where(sql<SqlBool>`(metadata->>'realm_id')::int = ${realmId}`)
    .orderBy('position')
    .execute();
  const entries = (await open(asStored(rows))).map((row) => toEntry(row as unknown as EventRow));
  if (!entries.some((e) => e.type === 'MessageSent' && e.data.message_id === messageId)) return null;
  return {
    message_id: messageId,
    deleted: entries.some((e) => e.type === 'MessagesDeleted' || e.type === 'MessagesShredded'),
    shredded: entries.some((e) => e.type === 'MessagesShredded'),
    events: entries,
  };
}
