import type { DataOf } from '../../domain/events.js';
import {
  AVAILABLE_NOTIFICATION_SOUNDS,
  DEFAULT_USER_SETTINGS,
  EMOJISET_CHOICES,
  LEGACY_DISPLAY_SETTINGS,
  LEGACY_NOTIFICATION_SETTINGS,
  SETTING_NAMES,
  settingValue,
} from '../../domain/settings/defaults.js';
import { languageName } from '../../domain/settings/languages.js';
import type { Db } from '../../db/database.js';
import { realmHost } from '../../read/realm.js';
import { apiEmail, avatarUrlFor, canSeeDeliveryEmail, type UserRow } from '../../read/users.js';
import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';
import type { ClientEvent, Recipient } from '../types.js';

const extras = () => ({ available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS, emojiset_choices: EMOJISET_CHOICES });

/** A user's settings: every known key, the stored value or (for a key added later) the default. */
function settingsOf(user: UserRow): Record<string, unknown> {
  const stored = user.settings as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) out[name] = settingValue(stored, name);
  return out;
}

// ---- /register ----

registerSection('user_settings', async ({ user }) => ({
  user_settings: { ...settingsOf(user), timezone: user.timezone, ...extras() },
}));

// Clients without the user_settings_object capability read the legacy settings at the top level.
registerSection('update_display_settings', async ({ user, options }) => {
  if (options.client_capabilities.user_settings_object) return {};
  const settings: Record<string, unknown> = { ...settingsOf(user), timezone: user.timezone };
  const out: Record<string, unknown> = { emojiset_choices: EMOJISET_CHOICES };
  for (const name of LEGACY_DISPLAY_SETTINGS) out[name] = settings[name];
  return out;
});

registerSection('update_global_notifications', async ({ user, options }) => {
  if (options.client_capabilities.user_settings_object) return {};
  const settings = settingsOf(user);
  const out: Record<string, unknown> = { available_notification_sounds: AVAILABLE_NOTIFICATION_SOUNDS };
  for (const name of LEGACY_NOTIFICATION_SETTINGS) out[name] = settings[name];
  return out;
});

registerSection('realm_user_settings_defaults', async ({ realm }) => {
  const stored = realm.user_settings_defaults as Record<string, unknown>;
  const defaults: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) defaults[name] = settingValue(stored, name);
  return { realm_user_settings_defaults: { ...defaults, ...extras() } };
});

// ---- events ----

const CATALOG_ORDER = new Map<string, number>([...SETTING_NAMES, 'timezone'].map((name, i) => [name, i]));

/** Stored event data is jsonb, which does not keep key order: list changes in the catalog's order. */
function inCatalogOrder(changes: Record<string, unknown>): Array<[string, unknown]> {
  const rank = (name: string) => CATALOG_ORDER.get(name) ?? Number.MAX_SAFE_INTEGER;
  return Object.entries(changes).sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * What the user's own clients hear about changed settings: `user_settings` for every client, and
 * for clients without user_settings_object also the legacy event the setting belonged to.
 */
function ownSettingEvents(r: Recipient, changes: Record<string, unknown>, email: string): ClientEvent[] {
  const legacy = !r.queue.client_capabilities.user_settings_object;
  const out: ClientEvent[] = [];
  for (const [property, value] of inCatalogOrder(changes)) {
    const language = property === 'default_language' ? { language_name: languageName(String(value)) } : {};
    out.push({ type: 'user_settings', op: 'update', property, value, ...language });
    if (!legacy) continue;
    if (LEGACY_DISPLAY_SETTINGS.includes(property)) {
      out.push({ type: 'update_display_settings', user: email, setting_name: property, setting: value, ...language });
    }
    if (LEGACY_NOTIFICATION_SETTINGS.includes(property)) {
      out.push({ type: 'update_global_notifications', user: email, notification_name: property, setting: value });
    }
  }
  return out;
}

/** The value a setting had just before `version` of the user's stream, from the log itself. */
async function settingBefore(db: Db, userId: number, version: number, name: string): Promise<unknown> {
  const rows = await db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('stream_id', '=', `user-${userId}`)
    .where('stream_version', '<', version)
    .where('type', 'in', ['UserCreated', 'UserSettingsChanged'])
    .orderBy('stream_version', 'desc')
    .execute();
  for (const row of rows) {
    const data = (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, any>;
    const source = row.type === 'UserCreated' ? data.settings : data.changes;
    if (source && Object.hasOwn(source, name)) return source[name];
  }
  return (DEFAULT_USER_SETTINGS as Record<string, unknown>)[name];
}

const viewerOf = (r: Recipient) => ({ user_id: r.user.id, role: r.user.role, realm_id: r.realm.id });
const withVisibility = (row: UserRow, visibility: unknown): UserRow => ({
  ...row,
  settings: { ...(row.settings as Record<string, unknown>), email_address_visibility: visibility },
});

/**
 * Who may see a user's real address follows their email_address_visibility: when it changes,
 * the others whose access changed get the address (or null), everyone gets the new API email
 * when it changes, and clients that compute avatar URLs get the URL that access now implies.
 */
function visibilityEvents(r: Recipient, before: UserRow, after: UserRow): ClientEvent[] {
  const update = (person: Record<string, unknown>): ClientEvent => ({ type: 'realm_user', op: 'update', person: { user_id: after.id, ...person } });
  const host = realmHost(r.realm);
  const out: ClientEvent[] = [];
  const oldApi = apiEmail(before, host);
  const newApi = apiEmail(after, host);
  if (r.user.id === after.id) return oldApi === newApi ? [] : [update({ new_email: newApi })];
  const saw = canSeeDeliveryEmail(viewerOf(r), before);
  const sees = canSeeDeliveryEmail(viewerOf(r), after);
  if (saw !== sees) out.push(update({ delivery_email: sees ? after.delivery_email : null }));
  if (oldApi !== newApi) out.push(update({ new_email: newApi }));
  const oldAvatar = avatarUrlFor(before, saw, r.queue.client_gravatar);
  const newAvatar = avatarUrlFor(after, sees, r.queue.client_gravatar);
  if (oldAvatar !== newAvatar) {
    out.push(update({ avatar_source: after.avatar_source, avatar_url: newAvatar, avatar_url_medium: newAvatar, avatar_version: after.avatar_version }));
  }
  return out;
}

registerTranslator('UserSettingsChanged', async (event, db) => {
  const d = event.data as DataOf<'UserSettingsChanged'>;
  const row = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!row) return null;
  const own = (r: Recipient) => ownSettingEvents(r, d.changes, apiEmail(row, realmHost(r.realm)));
  if (!Object.hasOwn(d.changes, 'email_address_visibility')) return { audience: new Set([d.user_id]), forUser: own };
  const previous = await settingBefore(db, d.user_id, event.stream_version, 'email_address_visibility');
  const before = withVisibility(row, previous);
  const after = withVisibility(row, d.changes.email_address_visibility);
  if (!row.is_active) return { audience: new Set([d.user_id]), forUser: own };
  return {
    audience: 'realm',
    forUser: (r) => [...(r.user.id === d.user_id ? own(r) : []), ...visibilityEvents(r, before, after)],
  };
});

// The users area tells everyone about a new time zone (realm_user); the user's own clients also
// get it as a setting.
registerTranslator('UserTimezoneChanged', async (event, db) => {
  const d = event.data as DataOf<'UserTimezoneChanged'>;
  const row = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!row) return null;
  return {
    audience: new Set([d.user_id]),
    forUser: (r) => ownSettingEvents(r, { timezone: d.timezone }, apiEmail(row, realmHost(r.realm))),
  };
});

registerTranslator('RealmUserSettingsDefaultsChanged', async (event) => {
  const d = event.data as DataOf<'RealmUserSettingsDefaultsChanged'>;
  const events: ClientEvent[] = inCatalogOrder(d.changes).map(([property, value]) => ({
    type: 'realm_user_settings_defaults',
    op: 'update',
    property,
    value,
  }));
  return { audience: 'realm', forUser: (r) => (r.realm.id === d.realm_id ? events : []) };
});

// A confirmed email change (see services/email-change.ts): the users area reports the new
// addresses; a Gravatar avatar is keyed on the address, so its URL changes too.
registerTranslator('UserEmailChanged', async (event, db) => {
  const d = event.data as DataOf<'UserEmailChanged'>;
  const row = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!row || row.avatar_source !== 'G') return null;
  const after = { ...row, delivery_email: d.delivery_email };
  return {
    audience: 'realm',
    forUser: (r) => {
      const url = avatarUrlFor(after, canSeeDeliveryEmail(viewerOf(r), after), r.queue.client_gravatar);
      if (url === null || url === undefined) return [];
      return [{
        type: 'realm_user',
        op: 'update',
        person: { user_id: d.user_id, avatar_source: after.avatar_source, avatar_url: url, avatar_url_medium: url, avatar_version: after.avatar_version },
      }];
    },
  };
});
