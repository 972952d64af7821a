import type { Db } from '../db/database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id this database's log was given when it was created (migration 0096). */
export async function readLogId(db: Db): Promise<string> {
  const row = await db.selectFrom('log_identity').select('log_id').executeTakeFirstOrThrow();
  return row.log_id;
}

/** Whether an event with this id is in this database's log. */
export async function logHasEvent(db: Db, eventId: string): Promise<boolean> {
  if (!UUID.test(eventId)) return false;
  const row = await db.selectFrom('events').select('position').where('event_id', '=', eventId).executeTakeFirst();
  return row !== undefined;
}
