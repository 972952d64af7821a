import { accessibleHumanIds, guestsWhoCanAccess, limitsUserAccess, mayHearAbout } from '../../read/user-access.js';
import type { DataOf } from '../../domain/events.js';
import { DISABLED_PRESENCE_AGE_SECS } from '../../domain/presence/rules.js';
import { legacyClientPresence, presenceDisabledInRealm, presenceResponse, type PresenceTimes } from '../../read/presence.js';
import { realmHost } from '../../read/realm.js';
import { realmUserStatus } from '../../read/user-status.js';
import { apiEmail } from '../../read/users.js';
import type { Db } from '../../db/database.js';
import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';
import type { ClientEvent, PreparedEvent, Recipient } from '../types.js';

// Read in the registration's transaction (no shared copy): the state must match the queue's start.
registerSection('presence', async ({ trx, realm, options, presenceLocal }) => presenceResponse(trx as Db, realm, options.slim_presence, Date.now(), { local: presenceLocal }));

registerSection('user_status', async ({ trx, realm, user }) => {
  const all = await realmUserStatus(trx as Db, realm.id);
  // A guest limited by can_access_all_users_group sees the statuses of the users they can access only.
  if (!(await limitsUserAccess(trx as Db, realm, user))) return { user_status: all };
  // (Only humans have a status.)
  const accessible = await accessibleHumanIds(trx as Db, user);
  return { user_status: Object.fromEntries(Object.entries(all).filter(([id]) => accessible.has(Number(id)))) };
});

/**
 * The real server's presence event: the legacy per-client dictionary in both forms; a queue
 * registered with slim_presence gets it without the (deprecated) email.
 */
async function presenceEvent(db: Db, userId: number, times: Pick<PresenceTimes, 'last_active_time' | 'last_connected_time'>, time: string, forced: boolean): Promise<PreparedEvent | null> {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!user || user.is_bot) return null;
  const website = legacyClientPresence({ ...times, date_joined: Math.floor(Date.parse(user.date_joined) / 1000) });
  const server_timestamp = Date.parse(time) / 1000;
  return {
    audience: 'realm',
    forUser: (r: Recipient): ClientEvent[] => {
      if (!forced && presenceDisabledInRealm(r.realm)) return [];
      const event: ClientEvent = { type: 'presence', user_id: user.id, server_timestamp, presence: { website: { ...website } } };
      if (!r.queue.slim_presence) event.email = apiEmail(user, realmHost(r.realm));
      return [event];
    },
  };
}

registerTranslator('PresenceChanged', async (event, db) => {
  const d = event.data as DataOf<'PresenceChanged'>;
  return presenceEvent(db, d.user_id, d, event.metadata.time, false);
});

// Turning presence_enabled on or off is announced at once (the real server's force_send_update),
// with the times projections/presence.ts stores for it.
registerTranslator('UserSettingsChanged', async (event, db) => {
  const d = event.data as DataOf<'UserSettingsChanged'>;
  const enabled = d.changes.presence_enabled;
  if (typeof enabled !== 'boolean') return null;
  const time = Math.floor(Date.parse(event.metadata.time) / 1000);
  const times = enabled ? { last_active_time: time, last_connected_time: time } : { last_active_time: null, last_connected_time: time - DISABLED_PRESENCE_AGE_SECS };
  return presenceEvent(db, d.user_id, times, event.metadata.time, true);
});

registerTranslator('UserStatusChanged', async (event, db) => {
  const d = event.data as DataOf<'UserStatusChanged'>;
  const out: ClientEvent = { type: 'user_status', user_id: d.user_id };
  if (d.away !== null) out.away = d.away;
  if (d.status_text !== null) out.status_text = d.status_text;
  if (d.emoji_name !== null) {
    out.emoji_name = d.emoji_name;
    out.emoji_code = d.emoji_code ?? '';
    out.reaction_type = d.reaction_type ?? 'unicode_emoji';
  }
  // A guest limited by can_access_all_users_group hears only of the users they can access (feature level 228).
  const guests = await guestsWhoCanAccess(db, d.user_id);
  return { audience: 'realm', forUser: (r) => (mayHearAbout(r.user, guests) ? [{ ...out }] : []) };
});
