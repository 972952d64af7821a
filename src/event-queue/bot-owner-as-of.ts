import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import { stateAsOf } from './stream-history.js';

/**
 * Who owned a bot when `event` (an event of the bot's own stream) was recorded: the audience of
 * its realm_bot events is the owner of that moment, however late a queue reads the event (a
 * later owner must not hear of what came before the bot was theirs, nor the former owner lose it).
 */
export async function botOwnerAsOf(db: Db, event: StoredEvent): Promise<number | null> {
  return stateAsOf<number | null, { type: string; data: { bot_owner_id?: number | null } }>(db, event, null, (owner, past) =>
    past.type === 'UserCreated' || past.type === 'UserBotOwnerChanged' ? past.data.bot_owner_id ?? null : owner);
}
