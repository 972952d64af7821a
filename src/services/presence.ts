import type { Db } from '../db/database.js';
import { runPrepared } from '../db/prepared.js';
import { errors } from '../domain/errors.js';
import { decidePing, parseStatus, type PingOutcome } from '../domain/presence/decider.js';
import type { PresenceChanged } from '../domain/presence/events.js';
import { presenceResponse, readLastSeen } from '../read/presence.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';

export const presenceStream = (userId: number) => `presence-${userId}`;

export interface PresencePing {
  status: string;
  ping_only?: boolean;
  new_user_input?: boolean;
  slim_presence?: boolean;
}

export const presenceEnabled = (user: UserRow) => (user.settings as Record<string, unknown>).presence_enabled !== false;

/**
 * Moves the user's row in presence_last_seen and says whether others now see a different
 * presence. Compare-and-set instead of a locked transaction: a read, then (only when the times
 * move) one conditional write, so the common ping costs one or two statements. Concurrent pings
 * of one user retry on the row the other wrote, so a change is decided (and logged) once.
 */
async function recordPing(db: Db, user: UserRow, status: 'active' | 'idle', now: number): Promise<PingOutcome> {
  for (;;) {
    const prev = await readLastSeen(db, user.id);
    const outcome = decidePing(prev, status, now);
    if (!outcome.write) return outcome;
    if (!prev) {
      const inserted = await db
        .insertInto('presence_last_seen')
        .values({ user_id: user.id, realm_id: user.realm_id, ...outcome.next })
        .onConflict((oc) => oc.column('user_id').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return outcome;
      continue;
    }
    const updated = await runPrepared(db, db
      .updateTable('presence_last_seen')
      .set(outcome.next)
      .where('user_id', '=', user.id)
      .where((eb) => (prev.last_active_time === null ? eb('last_active_time', 'is', null) : eb('last_active_time', '=', prev.last_active_time)))
      .where('last_connected_time', '=', prev.last_connected_time)
      .where('logged_status', '=', prev.logged_status)
      // RETURNING, not the affected-row count: the embedded backend reports no count for a prepared (marked) statement.
      .returning('user_id'));
    if (updated.rows.length === 1) return outcome;
  }
}

/**
 * POST /users/me/presence, the real server's update_active_status_backend: every client calls it
 * once a minute. The ping moves the pings table; only a change others can see is logged.
 */
export async function pingPresence(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, ping: PresencePing): Promise<Record<string, unknown>> {
  if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
  const status = parseStatus(ping.status);
  // A user who turned presence off is not recorded at all (they appear offline to others).
  if (presenceEnabled(user)) {
    const now = Math.floor(meta.now.getTime() / 1000);
    const outcome = await recordPing(ctx.db, user, status, now);
    if (outcome.changed) {
      const event: PresenceChanged = {
        type: 'PresenceChanged',
        data: {
          user_id: user.id,
          realm_id: user.realm_id,
          status: outcome.changed,
          last_active_time: outcome.next.last_active_time,
          last_connected_time: outcome.next.last_connected_time,
        },
      };
      await ctx.commands.run(metadataOf(meta), async () => ({
        appends: [{ streamId: presenceStream(user.id), expectedVersion: undefined, events: [event] }],
        result: undefined,
      }));
    }
  }
  if (ping.ping_only) return {};
  return presenceResponse(ctx.db, realm, ping.slim_presence ?? false, meta.now.getTime());
}
