import type { Db } from '../db/database.js';

/** The muted_users client shape: whom `userId` muted and when (seconds). */
export async function listMutedUsers(db: Db, userId: number): Promise<Array<{ id: number; timestamp: number }>> {
  const rows = await db.selectFrom('muted_users').select(['muted_user_id', 'date_muted']).where('user_id', '=', userId).orderBy('muted_user_id').execute();
  return rows.map((r) => ({ id: r.muted_user_id, timestamp: Number(r.date_muted) }));
}

/** Which of `userIds` muted `senderId` (the send path marks the message read for them). */
export async function usersMuting(db: Db, senderId: number, userIds: readonly number[]): Promise<number[]> {
  // A sender is muted by few users: read those (by the index) and keep the receivers among them.
  const rows = await db.selectFrom('muted_users').select('user_id').where('muted_user_id', '=', senderId).execute();
  return mutersAmong(rows.map((r) => r.user_id), userIds);
}

/** Those of `muterIds` (everyone who muted a sender) who are among `userIds`, in order. */
export function mutersAmong(muterIds: readonly number[], userIds: readonly number[]): number[] {
  if (muterIds.length === 0) return [];
  const receivers = new Set(userIds);
  return muterIds.filter((id) => receivers.has(id)).sort((a, b) => a - b);
}
