import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { ServiceContext } from './context.js';

/**
 * Keys of things that have ended (an accepted or revoked invitation, a delivered or deleted
 * scheduled message) are destroyed right after the event that ends them commits: destroyed before,
 * a refused append would leave a live thing whose log copy no longer opens. The event itself names
 * the key (keysDestroyedBy), so every reader evicts it; killed in between, the forgetting job's
 * sweepEndedKeys destroys it on its next pass.
 */
export async function destroyEndedKeys(ctx: Pick<ServiceContext, 'db' | 'store'>, keyIds: readonly string[]): Promise<void> {
  if (keyIds.length === 0) return;
  if (ctx.store.crypto) await ctx.store.crypto.keys.destroy(keyIds);
  else await sql`DELETE FROM data_keys WHERE key_id = ANY(${[...keyIds]}::text[])`.execute(ctx.db);
}

/**
 * The safety net: keys of invitations no longer pending and of scheduled messages no longer
 * waiting. Only keys older than an hour: a key is created just before the event that first uses
 * it, so a younger key may belong to a thing whose row is not folded yet. Returns how many went.
 */
export async function sweepEndedKeys(db: Db): Promise<number> {
  const invites = await sql`DELETE FROM data_keys k WHERE k.scope = 'invite' AND k.created_at < now() - interval '1 hour'
    AND NOT EXISTS (SELECT 1 FROM invites i WHERE i.id::text = k.subject AND i.accepted_user_id IS NULL)`.execute(db);
  const scheduled = await sql`DELETE FROM data_keys k WHERE k.scope = 'scheduled_message' AND k.created_at < now() - interval '1 hour'
    AND NOT EXISTS (SELECT 1 FROM scheduled_messages s WHERE 'scheduled-message:' || s.id::text = k.key_id AND NOT s.delivered)`.execute(db);
  return Number(invites.numAffectedRows ?? 0) + Number(scheduled.numAffectedRows ?? 0);
}
