import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { FlagBit } from '../domain/messages/flags.js';
import type { MessageRow } from './messages.js';

/**
 * Who has read `message`, as the real server's read receipts count them: active users whose
 * send_read_receipts is on, never the sender, never a user who muted the viewer or whom the viewer
 * muted. "Read" is the same state GET /messages shows: a received message is read by its READ bit
 * or the user's watermark, unless marked unread; a message the user did not receive counts only
 * when they have a flag row for it or reacted to it (the real server's historical UserMessage row,
 * which reacting creates already read; unlike that row, ours goes when the reaction does).
 */
export async function readReceiptUserIds(db: Db, viewerId: number, message: MessageRow): Promise<number[]> {
  const flags = sql`COALESCE(f.flags, 0)`;
  const received = message.dm_key !== null
    ? sql`EXISTS (SELECT 1 FROM message_dm_recipients d WHERE d.user_id = u.id AND d.message_id = ${message.id})`
    : sql`COALESCE(
        (SELECT mr.received FROM message_moved_receptions mr WHERE mr.user_id = u.id AND mr.message_id = ${message.id}),
        EXISTS (SELECT 1 FROM message_reception_spans s WHERE s.user_id = u.id AND s.stream_id = ${message.stream_id}
          AND s.from_id <= ${message.id} AND (s.to_id IS NULL OR s.to_id >= ${message.id})))`;
  const rows = await sql<{ id: number }>`
    SELECT u.id FROM users u
      LEFT JOIN message_flags f ON f.user_id = u.id AND f.message_id = ${message.id}
      LEFT JOIN message_read_state rs ON rs.user_id = u.id
    WHERE u.realm_id = ${message.realm_id} AND u.is_active AND u.id <> ${message.sender_id}
      AND COALESCE((u.settings->>'send_read_receipts')::boolean, true)
      AND NOT EXISTS (SELECT 1 FROM muted_users mu
        WHERE (mu.user_id = u.id AND mu.muted_user_id = ${viewerId}) OR (mu.user_id = ${viewerId} AND mu.muted_user_id = u.id))
      AND ${flags} & ${FlagBit.UNREAD} = 0
      AND CASE WHEN ${received}
        THEN ${flags} & ${FlagBit.READ} <> 0 OR ${message.id} <= COALESCE(rs.read_through, 0)
        ELSE f.flags IS NOT NULL OR EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = ${message.id} AND r.user_id = u.id) END
    ORDER BY u.id`.execute(db);
  return rows.rows.map((r) => Number(r.id));
}
