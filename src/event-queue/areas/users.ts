import { guestsWhoCanAccess, inaccessibleUserDict, inaccessibleUserIds, mayHearAbout } from '../../read/user-access.js';
import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { apiEmail, avatarUrlFor, canSeeDeliveryEmail, formatUser, listUsers, type UserRow } from '../../read/users.js';
import { listSystemBots } from '../../services/system-bots.js';
import { realmHost, type RealmRow } from '../../read/realm.js';
import { hasPolicy } from '../../domain/channels/decider.js';
import { actorOf as channelActorOf, realmSettingsOf } from '../../services/channels.js';
import { Role, isAdminRole } from '../../domain/roles.js';
import type { ClientEvent, PreparedEvent, Recipient } from '../types.js';
import type { StoredEvent } from '../../eventstore/types.js';
import type { Db } from '../../db/database.js';
import { listProfileFields } from '../../read/profile-fields.js';
import { botOwnerAsOf } from '../bot-owner-as-of.js';
import { botServicesOf, getBotService, serviceDict } from '../../read/bot-services.js';
import { requestEvents } from '../request-events.js';

const viewerOf = (r: Recipient) => ({ user_id: r.user.id, role: r.user.role, realm_id: r.realm.id });

/**
 * realm_user update sent to everyone in the realm who may see that user: a guest limited by
 * can_access_all_users_group hears only of the users they can access (feature level 228).
 */
function personUpdate(person: (r: Recipient) => Record<string, unknown> | null, guests: ReadonlySet<number> | null = null): PreparedEvent {
  return {
    audience: 'realm',
    forUser: (r) => {
      if (!mayHearAbout(r.user, guests)) return [];
      const p = person(r);
      return p ? [{ type: 'realm_user', op: 'update', person: p }] : [];
    },
  };
}

function rowFromCreated(d: DataOf<'UserCreated'>): UserRow {
  return {
    id: d.user_id,
    realm_id: d.realm_id,
    email: d.email,
    delivery_email: d.delivery_email,
    full_name: d.full_name,
    role: d.role,
    is_active: true,
    is_bot: d.is_bot,
    is_system_bot: d.is_system_bot === true,
    bot_type: d.bot_type,
    bot_owner_id: d.bot_owner_id,
    is_billing_admin: false,
    api_key: '',
    password_hash: null,
    timezone: d.timezone,
    date_joined: d.date_joined,
    avatar_source: 'G',
    avatar_version: 1,
    default_sending_stream_id: null,
    default_events_register_stream_id: null,
    default_all_public_streams: false,
    settings: d.settings,
    profile_data: {},
    version: 1,
  };
}


registerTranslator('UserCreated', async (event, db) => {
  const d = event.data as DataOf<'UserCreated'>;
  // System bots are created with the organization and reach clients only as cross_realm_bots.
  if (d.is_system_bot) return null;
  const row = rowFromCreated(d);
  const guests = await guestsWhoCanAccess(db, d.user_id);
  return {
    audience: 'realm',
    forUser: (r) => {
      // A guest who cannot access the newcomer gets an "Unknown user" placeholder (feature level
      // 232), or nothing with the user_list_incomplete capability.
      if (!mayHearAbout(r.user, guests)) {
        if (r.queue.client_capabilities.user_list_incomplete) return [];
        return [{ type: 'realm_user', op: 'add', person: inaccessibleUserDict(d.user_id, realmHost(r.realm)) }];
      }
      const person = formatUser(row, viewerOf(r), {
        clientGravatar: r.queue.client_gravatar,
        includeCustomProfileFields: true,
        realmHost: realmHost(r.realm),
        avatarUrlOptional: r.queue.client_capabilities.user_avatar_url_field_optional,
      });
      const events: ClientEvent[] = [{ type: 'realm_user', op: 'add', person }];
      if (row.is_bot && (isAdminRole(r.user.role) || row.bot_owner_id === r.user.id)) {
        events.push({ type: 'realm_bot', op: 'add', bot: botDict({ ...row, api_key: d.api_key }, new Map(), d.service ? [serviceDict(d.service)] : []) });
      }
      return events;
    },
  };
});

registerTranslator('UserRenamed', async (e, db) => {
  const d = e.data as DataOf<'UserRenamed'>;
  return withBotUpdate(db, d.user_id, personUpdate(() => ({ user_id: d.user_id, full_name: d.full_name }), await guestsWhoCanAccess(db, d.user_id)), { full_name: d.full_name }, e);
});
registerTranslator('UserRoleChanged', async (e, db) => {
  const d = e.data as DataOf<'UserRoleChanged'>;
  return personUpdate(() => ({ user_id: d.user_id, role: d.role }), await guestsWhoCanAccess(db, d.user_id));
});
registerTranslator('UserBillingAdminChanged', async (e, db) => {
  const d = e.data as DataOf<'UserBillingAdminChanged'>;
  return personUpdate(() => ({ user_id: d.user_id, is_billing_admin: d.is_billing_admin }), await guestsWhoCanAccess(db, d.user_id));
});
// Deactivation and reactivation: account-lifecycle.ts.
registerTranslator('UserApiKeyRegenerated', async (e, db) => {
  const d = e.data as DataOf<'UserApiKeyRegenerated'>;
  const bot = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!bot?.is_bot) return null;
  const administrators = await botAdministrators(db, { ...bot, bot_owner_id: await botOwnerAsOf(db, e) });
  return {
    audience: administrators,
    forUser: () => [{ type: 'realm_bot', op: 'update', bot: { user_id: d.user_id, api_key: d.api_key } }],
  };
});
/**
 * As the real server's send_bot_owner_update_events: the former owner (unless an administrator,
 * who keeps the bot) gets realm_bot delete, the new owner (same exception) realm_bot add, the
 * administrators realm_bot update; then everyone the new bot_owner_id.
 */
export async function botOwnerChange(db: Db, d: DataOf<'UserBotOwnerChanged'>): Promise<PreparedEvent | null> {
  const bot = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!bot) return null;
  const row: UserRow = { ...bot, bot_owner_id: d.bot_owner_id };
  const admins = await botAdministrators(db, { ...row, bot_owner_id: null });
  const names = await channelNames(db, [row.default_sending_stream_id, row.default_events_register_stream_id]);
  const service = await getBotService(db, d.user_id);
  const oldOwner = d.old_bot_owner_id ?? null;
  return {
    audience: 'realm',
    forUser: (r) => {
      const id = r.user.id;
      const events: ClientEvent[] = [];
      if (admins.has(id)) events.push({ type: 'realm_bot', op: 'update', bot: { user_id: d.user_id, owner_id: d.bot_owner_id } });
      else if (id === d.bot_owner_id) events.push({ type: 'realm_bot', op: 'add', bot: botDict(row, names, service ? [serviceDict(service)] : []) });
      else if (id === oldOwner) events.push({ type: 'realm_bot', op: 'delete', bot: { user_id: d.user_id } });
      events.push({ type: 'realm_user', op: 'update', person: { user_id: d.user_id, bot_owner_id: d.bot_owner_id } });
      return events;
    },
  };
}

registerTranslator('UserBotOwnerChanged', async (e, db) => {
  const d = e.data as DataOf<'UserBotOwnerChanged'>;
  // Reactivating a bot whose owner is gone makes the reactivating administrator its owner: those
  // events go out with the reactivation's, before its channels and groups (account-lifecycle.ts).
  const reactivated = (await requestEvents(db, e, ['UserReactivated'])).some((r) => r.position < e.position && (r.data as { user_id: number }).user_id === d.user_id);
  return reactivated ? null : botOwnerChange(db, d);
});
registerTranslator('UserTimezoneChanged', async (e, db) => {
  const d = e.data as DataOf<'UserTimezoneChanged'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  return personUpdate((r) => ({ user_id: d.user_id, email: user ? apiEmail(user, realmHost(r.realm)) : '', timezone: d.timezone }), await guestsWhoCanAccess(db, d.user_id));
});
registerTranslator('UserAvatarChanged', async (e, db) => {
  const d = e.data as DataOf<'UserAvatarChanged'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const row = { ...user, avatar_source: d.avatar_source, avatar_version: d.avatar_version };
  // Like the real server, the event carries the full URLs whatever the client's client_gravatar:
  // a client_gravatar client drops a Gravatar URL from its user list itself.
  const person = {
    user_id: d.user_id,
    avatar_source: d.avatar_source,
    avatar_url: avatarUrlFor(row, true, false),
    avatar_url_medium: avatarUrlFor(row, true, false, true),
    avatar_version: d.avatar_version,
  };
  const administrators = row.is_bot ? await botAdministrators(db, row) : new Set<number>();
  const guests = await guestsWhoCanAccess(db, d.user_id);
  return {
    audience: 'realm',
    forUser: (r) => {
      if (!mayHearAbout(r.user, guests)) return [];
      const events: ClientEvent[] = [{ type: 'realm_user', op: 'update', person }];
      if (administrators.has(r.user.id)) events.push({ type: 'realm_bot', op: 'update', bot: { user_id: d.user_id, avatar_url: person.avatar_url } });
      return events;
    },
  };
});
registerTranslator('UserEmailChanged', async (e, db) => {
  const d = e.data as DataOf<'UserEmailChanged'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const row = { ...user, delivery_email: d.delivery_email };
  const guests = await guestsWhoCanAccess(db, d.user_id);
  return {
    audience: 'realm',
    forUser: (r) => {
      if (!mayHearAbout(r.user, guests)) return [];
      const events: ClientEvent[] = [];
      if (canSeeDeliveryEmail(viewerOf(r), row)) {
        events.push({ type: 'realm_user', op: 'update', person: { user_id: d.user_id, delivery_email: d.delivery_email } });
      }
      if (apiEmail(row, realmHost(r.realm)) === d.delivery_email) {
        events.push({ type: 'realm_user', op: 'update', person: { user_id: d.user_id, new_email: d.delivery_email } });
      }
      return events;
    },
  };
});
/** An erased person becomes the deleted user: the same fields the users projection sets. */
registerTranslator('UserErased', async (e, db) => {
  const d = e.data as DataOf<'UserErased'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const row: UserRow = {
    ...user, full_name: d.full_name, email: d.email, delivery_email: d.email, is_active: false, role: Role.MEMBER, avatar_source: 'G', avatar_version: d.avatar_version,
  };
  const avatar = {
    avatar_source: 'G',
    avatar_url: avatarUrlFor(row, true, false),
    avatar_url_medium: avatarUrlFor(row, true, false, true),
    avatar_version: d.avatar_version,
  };
  const guests = await guestsWhoCanAccess(db, d.user_id);
  return {
    audience: 'realm',
    forUser: (r) => {
      if (!mayHearAbout(r.user, guests)) return [];
      const person = (fields: Record<string, unknown>): ClientEvent => ({ type: 'realm_user', op: 'update', person: { user_id: d.user_id, ...fields } });
      const events: ClientEvent[] = [person({ full_name: d.full_name })];
      if (canSeeDeliveryEmail(viewerOf(r), row)) events.push(person({ delivery_email: d.email }));
      if (apiEmail(row, realmHost(r.realm)) === d.email) events.push(person({ new_email: d.email }));
      events.push(person(avatar), person({ role: Role.MEMBER }), person({ is_active: false }));
      return events;
    },
  };
});
registerTranslator('UserProfileDataChanged', async (e, db) => {
  const d = e.data as DataOf<'UserProfileDataChanged'>;
  const field: Record<string, unknown> = { id: d.field_id, value: d.value };
  if (d.rendered_value !== null) field.rendered_value = d.rendered_value;
  return personUpdate(() => ({ user_id: d.user_id, custom_profile_field: field }), await guestsWhoCanAccess(db, d.user_id));
});

/**
 * What the user may do under the organization's policies. No event carries these: like the real
 * server, a client recomputes them when a policy (realm update) or the user's role changes.
 */
export function userPermissions(user: UserRow, realm: RealmRow, webPublicServerSetting: boolean, now: Date) {
  const actor = channelActorOf(user, realm, now);
  const settings = realmSettingsOf(realm, webPublicServerSetting);
  const may = (policy: unknown) => hasPolicy(Number(policy), actor);
  const publicStreams = may(settings.create_public_stream_policy);
  const privateStreams = may(settings.create_private_stream_policy);
  const webPublicStreams = settings.web_public_streams_enabled && may(settings.create_web_public_stream_policy);
  return {
    can_create_streams: publicStreams || privateStreams || webPublicStreams,
    can_create_public_streams: publicStreams,
    can_create_private_streams: privateStreams,
    can_create_web_public_streams: webPublicStreams,
    can_subscribe_other_users: may(settings.invite_to_stream_policy),
    can_invite_others_to_realm: may(realm.properties.invite_to_realm_policy ?? 1),
  };
}

/** Who administers a bot (and gets realm_bot events): the realm's active human administrators and the owner. */
export async function botAdministrators(db: Db, bot: UserRow): Promise<Set<number>> {
  const admins = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', bot.realm_id)
    .where('role', '<=', Role.ADMINISTRATOR)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .execute();
  const ids = new Set(admins.map((a) => a.id));
  if (bot.bot_owner_id !== null) ids.add(bot.bot_owner_id);
  return ids;
}

/** A realm_user update, plus realm_bot update with `bot` fields for those who administer the user if it is a bot. */
async function withBotUpdate(db: Db, userId: number, update: PreparedEvent, bot: Record<string, unknown>, event?: StoredEvent): Promise<PreparedEvent> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!row?.is_bot) return update;
  // Given the event (of the bot's stream), its owner then; otherwise the owner now.
  const administrators = await botAdministrators(db, event ? { ...row, bot_owner_id: await botOwnerAsOf(db, event) } : row);
  return {
    audience: 'realm',
    forUser: (r) => [
      ...update.forUser(r),
      ...(administrators.has(r.user.id) ? [{ type: 'realm_bot', op: 'update', bot: { user_id: userId, ...bot } }] : []),
    ],
  };
}

/** Names of the given channels (a bot's default channels), by id. */
export async function channelNames(db: Db, ids: Array<number | null>): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('streams').select(['id', 'name']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

const nameOf = (names: Map<number, string>, id: number | null) => (id === null ? null : names.get(id) ?? null);

/** A bot's default channels by name, as the Bot object and GET /bots show them. */
export function botDefaults(bot: UserRow, names: Map<number, string>) {
  return {
    default_sending_stream: nameOf(names, bot.default_sending_stream_id),
    default_events_register_stream: nameOf(names, bot.default_events_register_stream_id),
    default_all_public_streams: bot.default_all_public_streams,
  };
}

/** The Bot object of realm_bots and realm_bot add; `services`: an outgoing webhook bot's service (serviceDict). */
export function botDict(bot: UserRow, names: Map<number, string> = new Map(), services: Array<Record<string, unknown>> = []): Record<string, unknown> {
  return {
    user_id: bot.id,
    full_name: bot.full_name,
    api_key: bot.api_key,
    email: bot.delivery_email,
    bot_type: bot.bot_type,
    is_active: bot.is_active,
    owner_id: bot.bot_owner_id,
    ...botDefaults(bot, names),
    avatar_url: avatarUrlFor(bot, true, false),
    services,
  };
}

/** The bots the user administers: every bot for an administrator, otherwise the bots the user owns. */
export async function administeredBots(db: Db, user: UserRow): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().where('realm_id', '=', user.realm_id).where('is_bot', '=', true).where('is_system_bot', '=', false);
  if (!isAdminRole(user.role)) query = query.where('bot_owner_id', '=', user.id);
  return query.orderBy('id').execute();
}

registerSection('realm_bot', async ({ trx, user }) => {
  const bots = await administeredBots(trx as Db, user);
  const names = await channelNames(trx as Db, bots.flatMap((b) => [b.default_sending_stream_id, b.default_events_register_stream_id]));
  const services = await botServicesOf(trx as Db, bots.map((b) => b.id));
  return { realm_bots: bots.map((b) => botDict(b, names, services.has(b.id) ? [serviceDict(services.get(b.id)!)] : [])) };
});

/** As the real server: the whole service, token included, to those who administer the bot. */
registerTranslator('BotServiceUpdated', async (e, db) => {
  const d = e.data as DataOf<'BotServiceUpdated'>;
  const bot = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  const service = await getBotService(db, d.user_id);
  if (!bot || !service) return null;
  return {
    audience: await botAdministrators(db, { ...bot, bot_owner_id: await botOwnerAsOf(db, e) }),
    forUser: () => [{ type: 'realm_bot', op: 'update', bot: { user_id: d.user_id, services: [serviceDict({ ...service, base_url: d.base_url, interface: d.interface })] } }],
  };
});

registerTranslator('BotDefaultChanged', async (e, db) => {
  const d = e.data as DataOf<'BotDefaultChanged'>;
  const bot = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!bot) return null;
  const value = typeof d.value === 'number' ? nameOf(await channelNames(db, [d.value]), d.value) : d.value;
  return {
    audience: await botAdministrators(db, { ...bot, bot_owner_id: await botOwnerAsOf(db, e) }),
    forUser: () => [{ type: 'realm_bot', op: 'update', bot: { user_id: d.user_id, [d.property]: value } }],
  };
});

registerSection('realm_user', async ({ trx, user, realm, options, config }) => {
  const users = await listUsers(trx as never, realm.id);
  const viewer = { user_id: user.id, role: user.role, realm_id: realm.id };
  const fmt = (u: UserRow) => {
    const out = formatUser(u, viewer, {
      clientGravatar: options.client_gravatar,
      includeCustomProfileFields: true,
      realmHost: realmHost(realm),
      avatarUrlOptional: options.client_capabilities.user_avatar_url_field_optional,
    });
    delete out.is_active;
    return out;
  };
  const self = formatUser(user, viewer, { clientGravatar: false, includeCustomProfileFields: false, realmHost: realmHost(realm) });
  // A guest limited by can_access_all_users_group gets "Unknown user" placeholders (always active)
  // for the users they cannot access, or nothing for them with the user_list_incomplete capability.
  const hidden = await inaccessibleUserIds(trx as Db, realm, user, users);
  const placeholders = options.client_capabilities.user_list_incomplete
    ? []
    : users.filter((u) => hidden.has(u.id)).map((u) => {
      const { is_active: _active, ...placeholder } = inaccessibleUserDict(u.id, realmHost(realm));
      return placeholder;
    });
  const accessible = users.filter((u) => !hidden.has(u.id));
  return {
    realm_users: [...accessible.filter((u) => u.is_active).map(fmt), ...placeholders],
    realm_non_active_users: accessible.filter((u) => !u.is_active).map(fmt),
    cross_realm_bots: (await listSystemBots(trx as never, realm.id)).map((bot) => ({ ...fmt(bot), is_system_bot: true })),
    user_id: user.id,
    email: self.email,
    delivery_email: user.delivery_email,
    full_name: user.full_name,
    is_admin: isAdminRole(user.role),
    is_owner: user.role === Role.OWNER,
    is_moderator: user.role === Role.MODERATOR,
    is_guest: user.role === Role.GUEST,
    is_billing_admin: user.is_billing_admin,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrlFor(user, true, false),
    avatar_url_medium: avatarUrlFor(user, true, false, true),
    ...userPermissions(user, realm, config.webPublicStreamsEnabled ?? false, new Date()),
  };
});

registerSection('custom_profile_fields', async ({ trx, realm }) => ({
  custom_profile_fields: await listProfileFields(trx as Db, realm.id),
  custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES,
}));

export const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: 'Short text' },
  LONG_TEXT: { id: 2, name: 'Long text' },
  SELECT: { id: 3, name: 'List of options' },
  DATE: { id: 4, name: 'Date picker' },
  URL: { id: 5, name: 'Link' },
  USER: { id: 6, name: 'Person picker' },
  EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
  PRONOUNS: { id: 8, name: 'Pronouns' },
};
