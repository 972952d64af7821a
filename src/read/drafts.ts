import type { Db } from '../db/database.js';
import type { DraftData } from '../domain/drafts/events.js';

export const MAX_DRAFTS_IN_REGISTER_RESPONSE = 1000;

/** A user's drafts, most recently edited first (ties: newest id first). */
export async function listDrafts(db: Db, userId: number, limit?: number): Promise<DraftData[]> {
  const rows = await db
    .selectFrom('drafts')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('timestamp', 'desc')
    .orderBy('id', 'desc')
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
