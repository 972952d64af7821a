import type { Db } from '../db/database.js';
import type { Selectable, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ScheduledMessagesTable } from '../db/schema/scheduled-messages.js';
import type { ScheduledMessageState } from '../domain/scheduled-messages/decider.js';

type Reader = Db | Transaction<Database>;

/** A scheduled message as GET /scheduled_messages, /register and the events show it. */
export interface ClientScheduledMessage {
  scheduled_message_id: number;
  type: 'stream' | 'private';
  to: number | number[];
  topic?: string;
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
}

export function toClientScheduledMessage(m: NonNullable<ScheduledMessageState>): ClientScheduledMessage {
  const base = { scheduled_message_id: m.id, type: m.type, content: m.content, rendered_content: m.rendered_content, scheduled_delivery_timestamp: m.scheduled_timestamp, failed: m.failed };
  return m.type === 'stream' ? { ...base, to: m.stream_id!, topic: m.topic } : { ...base, to: m.to };
}

type Row = Selectable<ScheduledMessagesTable>;

function stateOf(row: Row): NonNullable<ScheduledMessageState> & { version: number } {
  return {
    id: row.id,
    realm_id: row.realm_id,
    sender_id: row.sender_id,
    type: row.type as 'stream' | 'private',
    stream_id: row.stream_id,
    to: row.to,
    topic: row.topic,
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_timestamp: Number(row.scheduled_timestamp),
    read_by_sender: row.read_by_sender,
    client: row.client,
    failed: row.failed,
    delivered: row.delivered,
    version: row.version,
  };
}

export async function getScheduledMessage(db: Reader, id: number): Promise<(NonNullable<ScheduledMessageState> & { version: number }) | null> {
  if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return null;
  const row = await db.selectFrom('scheduled_messages').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? stateOf(row) : null;
}

/** The user's scheduled messages not yet sent (failed ones included), soonest first. */
export async function listUndeliveredScheduledMessages(db: Reader, userId: number): Promise<ClientScheduledMessage[]> {
  const rows = await db
    .selectFrom('scheduled_messages')
    .selectAll()
    .where('sender_id', '=', userId)
    .where('delivered', '=', false)
    .orderBy('scheduled_timestamp')
    .orderBy('id')
    .execute();
  return rows.map((row) => toClientScheduledMessage(stateOf(row)));
}

/** Ids of messages waiting whose time has come, soonest first. */
export async function dueScheduledMessageIds(db: Reader, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('scheduled_messages')
    .select('id')
    .where('delivered', '=', false)
    .where('failed', '=', false)
    .where('scheduled_timestamp', '<=', now)
    .orderBy('scheduled_timestamp')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** The soonest time a waiting message is due, or null. */
export async function nextScheduledTimestamp(db: Reader): Promise<number | null> {
  const row = await db
    .selectFrom('scheduled_messages')
    .select((eb) => eb.fn.min('scheduled_timestamp').as('next'))
    .where('delivered', '=', false)
    .where('failed', '=', false)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? null : Number(row.next);
}
