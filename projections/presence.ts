import { DISABLED_PRESENCE_AGE_SECS } from '../src/domain/presence/rules.js';
import { defineProjection } from './define.js';

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/**
 * Presence as the log knows it: the times of the last PresenceChanged, and what turning
 * presence_enabled on or off sets (the real server's do_change_user_setting: on = active now; off =
 * last seen DISABLED_PRESENCE_AGE_SECS before, never active). Coarser than presence_last_seen, which
 * the pings move in place and no rebuild touches; reads take the later of the two.
 */
export const userPresenceProjection = defineProjection({
  name: 'user_presence',
  version: 1,
  tables: ['user_presence'],
  handlers: {
    PresenceChanged: async (trx, d) => {
      const row = { user_id: d.user_id, realm_id: d.realm_id, last_active_time: d.last_active_time, last_connected_time: d.last_connected_time };
      await trx
        .insertInto('user_presence')
        .values(row)
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ last_active_time: row.last_active_time, last_connected_time: row.last_connected_time }))
        .execute();
    },
    UserSettingsChanged: async (trx, d, event) => {
      const enabled = d.changes.presence_enabled;
      if (typeof enabled !== 'boolean') return 'unchanged';
      const user = await trx.selectFrom('users').select('realm_id').where('id', '=', d.user_id).executeTakeFirst();
      if (!user) return 'unchanged';
      const time = seconds(event.metadata.time);
      const row = enabled
        ? { last_active_time: time, last_connected_time: time }
        : { last_active_time: null, last_connected_time: time - DISABLED_PRESENCE_AGE_SECS };
      await trx
        .insertInto('user_presence')
        .values({ user_id: d.user_id, realm_id: user.realm_id, ...row })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
        .execute();
    },
  },
});

/** Status text and emoji; `away` is not stored here (it is !presence_enabled). */
export const userStatusProjection = defineProjection({
  name: 'user_status',
  version: 1,
  tables: ['user_status'],
  handlers: {
    UserStatusChanged: async (trx, d) => {
      const changes: { status_text?: string; emoji_name?: string; emoji_code?: string; reaction_type?: string } = {};
      if (d.status_text !== null) changes.status_text = d.status_text;
      if (d.emoji_name !== null) {
        changes.emoji_name = d.emoji_name;
        if (d.emoji_code !== null) changes.emoji_code = d.emoji_code;
        if (d.reaction_type !== null) changes.reaction_type = d.reaction_type;
      }
      // The real server creates the row on any status request (away alone too).
      const insert = trx.insertInto('user_status').values({ user_id: d.user_id, realm_id: d.realm_id, ...changes });
      await (Object.keys(changes).length === 0
        ? insert.onConflict((oc) => oc.column('user_id').doNothing())
        : insert.onConflict((oc) => oc.column('user_id').doUpdateSet(changes))
      ).execute();
    },
    UserErased: async (trx, d) => {
      await trx.deleteFrom('user_status').where('user_id', '=', d.user_id).execute();
    },
  },
});
