import { sql } from 'kysely';
import { decideBotStorage, type BotStorageCommand } from '../domain/bot-storage/decider.js';
import { errors } from '../domain/errors.js';
import type { Db } from '../db/database.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const botStorageStream = (userId: number) => `bot-storage-${userId}`;

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The named entries, or every entry when no key is named (as the real server, an empty list means all). */
export async function readBotStorage(db: Db, userId: number, keys: string[] | undefined): Promise<Record<string, string>> {
  let query = db.selectFrom('bot_storage').select(['key', 'value']).where('user_id', '=', userId);
  const named = keys && keys.length > 0 ? [...new Set(keys)] : undefined;
  if (named) query = query.where('key', 'in', named);
  const rows = await query.execute();
  if (named && rows.length !== named.length) throw errors.badRequest('Key does not exist.');
  rows.sort((a, b) => byCodeUnit(a.key, b.key));
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** Sizes are counted in the database (length() counts characters, as the real server does). */
async function storageState(db: Db, userId: number, keys: string[]) {
  const total = await db
    .selectFrom('bot_storage')
    .select(sql<string | null>`sum(length(key) + length(value))`.as('size'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const rows = keys.length === 0
    ? []
    : await db
        .selectFrom('bot_storage')
        .select(['key', sql<number>`length(key) + length(value)`.as('size')])
        .where('user_id', '=', userId)
        .where('key', 'in', keys)
        .execute();
  return { total_size: Number(total?.size ?? 0), existing: new Map(rows.map((r) => [r.key, Number(r.size)])) };
}

async function allKeys(db: Db, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('bot_storage').select('key').where('user_id', '=', userId).execute();
  return rows.map((r) => r.key);
}

async function runBotStorage(ctx: ServiceContext, meta: RequestMeta, command: BotStorageCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = botStorageStream(command.user_id);
    const version = await streamVersion(ctx, streamId);
    // No key named: every key there is now (read inside the run, so a retry sees the current set).
    const resolved: BotStorageCommand =
      command.type === 'RemoveBotStorage' && command.keys.length === 0 ? { ...command, keys: await allKeys(ctx.db, command.user_id) } : command;
    const keys = resolved.type === 'SetBotStorage' ? Object.keys(resolved.storage) : resolved.keys;
    const state = await storageState(ctx.db, command.user_id, keys);
    const events = decideBotStorage(resolved, state);
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}

export function setBotStorage(ctx: ServiceContext, meta: RequestMeta, userId: number, storage: Record<string, string>): Promise<void> {
  return runBotStorage(ctx, meta, { type: 'SetBotStorage', user_id: userId, storage });
}

/** Removes the named keys, or every key when none is named. */
export function removeBotStorage(ctx: ServiceContext, meta: RequestMeta, userId: number, keys: string[] | undefined): Promise<void> {
  return runBotStorage(ctx, meta, { type: 'RemoveBotStorage', user_id: userId, keys: keys ?? [] });
}
