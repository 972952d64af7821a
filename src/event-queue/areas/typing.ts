import type { TypingData } from '../../domain/typing/events.js';
import { realmHost } from '../../read/realm.js';
import { apiEmail, type UserRow } from '../../read/users.js';
import type { Db } from '../../db/database.js';
import { registerTranslator } from '../translators.js';
import type { ClientEvent, Recipient } from '../types.js';

/** server_typing_started_expiry_period_milliseconds: after this, clients drop a start anyway. */
export const TYPING_EXPIRY_MS = 15_000;

/**
 * Typing notifications live in the log like every request, but a queue delivers one only while it
 * is fresh: a client polling long after must not show someone as typing. Freshness is judged when
 * the event is handed out (forUser), since a prepared event is cached and reused.
 */
/** The real server's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS: counted over active users' subscriptions. */
export const MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

async function activeSubscriberIds(db: Db, streamId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select('s.user_id')
    .where('s.stream_id', '=', streamId)
    .where('s.active', '=', true)
    .where('u.is_active', '=', true)
    .execute();
  return rows.map((r) => r.user_id);
}

const fresh = (time: string) => Date.now() - Date.parse(time) <= TYPING_EXPIRY_MS;
const receivesTyping = (r: Recipient) => (r.user.settings as Record<string, unknown>).receives_typing_notifications !== false;

for (const type of ['TypingStarted', 'TypingStopped'] as const) {
  registerTranslator(type, async (event, db) => {
    const d = event.data as TypingData;
    const op = type === 'TypingStarted' ? 'start' : 'stop';
    const time = event.metadata.time;
    const person = (row: UserRow, r: Recipient) => ({ user_id: row.id, email: apiEmail(row, realmHost(r.realm)) });
    if (d.message_type === 'stream') {
      const sender = await db.selectFrom('users').selectAll().where('id', '=', d.sender_id).executeTakeFirst();
      if (!sender || d.stream_id === null) return null;
      const subscribers = await activeSubscriberIds(db, d.stream_id);
      // As on the real server, a channel this large gets no typing notifications at all.
      if (subscribers.length > MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS) return null;
      return {
        audience: new Set(subscribers),
        forUser: (r): ClientEvent[] => {
          if (!fresh(time) || !receivesTyping(r) || !r.queue.client_capabilities.stream_typing_notifications) return [];
          return [{ type: 'typing', op, message_type: 'stream', sender: person(sender, r), stream_id: d.stream_id, topic: d.topic }];
        },
      };
    }
    const rows = await db.selectFrom('users').selectAll().where('id', 'in', [...d.recipient_ids, d.sender_id]).execute();
    const byId = new Map(rows.map((u) => [u.id, u]));
    const sender = byId.get(d.sender_id);
    if (!sender) return null;
    const recipients = d.recipient_ids.map((id) => byId.get(id)).filter((u): u is UserRow => u !== undefined);
    return {
      audience: new Set(recipients.filter((u) => u.is_active).map((u) => u.id)),
      forUser: (r): ClientEvent[] => {
        if (!fresh(time) || !receivesTyping(r)) return [];
        return [{ type: 'typing', op, message_type: 'direct', sender: person(sender, r), recipients: recipients.map((u) => person(u, r)) }];
      },
    };
  });
}
