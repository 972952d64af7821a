import type { Db } from '../db/database.js';
import type { DraftData } from '../domain/drafts/events.js';

export const MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000;

/**
 * A user's drafts by their last edit: oldest first for GET /drafts, newest first (and at most `limit`) for
 * /register, as the real server lists them (ties by id the same way).
 */
export async function listDrafts(db: Db, userId: number, order: 'oldest first' | 'newest first', limit?: number): Promise<DraftData[]> {
  const direction = order === 'oldest first' ? 'asc' : 'desc';
  const rows = await db
    .selectFrom('drafts')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('timestamp', direction)
    .orderBy('id', direction)
    .$if(limit !== undefined, (q) => q.limit(limit!))
    .execute();
  return rows.map((r) => ({
    id: r.id,
    type: r.type as DraftData['type'],
    to: r.to,
    topic: r.topic,
    content: r.content,
    timestamp: Number(r.timestamp),
  }));
}

export async function draftIdsOf(db: Db, userId: number): Promise<number[]> {
  const rows = await db.selectFrom('drafts').select('id').where('user_id', '=', userId).orderBy('id').execute();
  return rows.map((r) => r.id);
}
