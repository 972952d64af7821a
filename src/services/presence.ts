import { errors } from '../domain/errors.js';
import { parseStatus } from '../domain/presence/decider.js';
import type { PresenceChanged } from '../domain/presence/events.js';
import { presenceDisabledInRealm, type PresenceSources } from '../read/presence.js';
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
 * POST /users/me/presence, the real server's update_active_status_backend: every client calls it
 * once a minute. The ping moves this process's last-seen times (services/presence-tracker.ts);
 * only a change others can see is logged.
 */
export async function pingPresence(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, ping: PresencePing): Promise<{ presencesJson?: string; server_timestamp?: number }> {
  if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
  const status = parseStatus(ping.status);
  // A user who turned presence off is not recorded at all (they appear offline to others).
  if (presenceEnabled(user)) {
    const now = Math.floor(meta.now.getTime() / 1000);
    const outcome = await ctx.presence.tracker.ping(user.id, user.realm_id, status, now);
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
      // The answer and every read of presence come from the last-seen table (or this process's
      // tracker), which the change was written to before this append: the fold adds nothing a
      // reader would miss, so the ping answers once the event is in the log.
      await ctx.commands.run(metadataOf(meta), async () => ({
        appends: [{ streamId: presenceStream(user.id), expectedVersion: undefined, events: [event] }],
        result: undefined,
      }), { answerAt: 'committed' });
    }
  }
  if (ping.ping_only) return {};
  const nowMs = meta.now.getTime();
  if (presenceDisabledInRealm(realm)) return { presencesJson: '{}', server_timestamp: nowMs / 1000 };
  const rows = await ctx.presence.snapshots.rows(realm.id);
  const local = presenceSources(ctx).local;
  return { presencesJson: ctx.presence.bodies.text(realm, ping.slim_presence ?? false, rows, user.id, Math.floor(nowMs / 1000), local), server_timestamp: nowMs / 1000 };
}

/** Realm presence as this process shows it: a shared recent copy of the rows, with its own pings on top. */
export const presenceSources = (ctx: ServiceContext): PresenceSources => ({
  rows: (realmId) => ctx.presence.snapshots.rows(realmId),
  local: (userId) => ctx.presence.tracker.local(userId),
});
