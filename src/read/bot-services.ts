import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { BotServicesTable } from '../db/schema/outgoing-webhooks.js';

export type BotServiceRow = Selectable<BotServicesTable>;

/** The services of the given bots, by bot id (only outgoing webhook bots have one). */
export async function botServicesOf(db: Db, botIds: readonly number[]): Promise<Map<number, BotServiceRow>> {
  if (botIds.length === 0) return new Map();
  const rows = await db.selectFrom('bot_services').selectAll().where('user_id', 'in', [...new Set(botIds)]).execute();
  return new Map(rows.map((r) => [r.user_id, r]));
}

export async function getBotService(db: Db, botId: number): Promise<BotServiceRow | undefined> {
  return db.selectFrom('bot_services').selectAll().where('user_id', '=', botId).executeTakeFirst();
}

/** A service as the Bot object's `services` shows it (to the bot's owner and the administrators). */
export function serviceDict(service: BotServiceRow | { base_url: string; interface: number; token: string }): Record<string, unknown> {
  return { base_url: service.base_url, interface: service.interface, token: service.token };
}
