import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { Role } from '../domain/roles.js';
import { DEFAULT_REALM_PROPERTIES } from '../domain/realm/defaults.js';
import type { RealmRow } from './realm.js';
import type { UserRow } from './users.js';

/**
 * Limited user access (the realm setting can_access_all_users_group, feature level 225+): when it
 * names a group narrower than everyone, a guest outside it knows only the users they share
 * something with. Everyone else, and every bot, stays visible to all.
 */

/** The name of the system group the setting names (stored as a group id once changed, a name by default). */
async function accessGroupName(db: Db, realm: RealmRow): Promise<string> {
  const properties = { ...DEFAULT_REALM_PROPERTIES, ...(realm.properties as Record<string, unknown>) };
  const value = properties.can_access_all_users_group;
  if (typeof value === 'string') return value;
  if (typeof value !== 'number') return 'role:everyone';
  const row = await db.selectFrom('user_groups').select('name').where('id', '=', value).executeTakeFirst();
  return row?.name ?? 'role:everyone';
}

/** Whether the realm's guests see only some users (can_access_all_users_group names less than everyone). */
export async function realmLimitsGuests(db: Db, realmId: number): Promise<boolean> {
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', realmId).executeTakeFirst();
  return realm !== undefined && (await accessGroupName(db, realm)) !== 'role:everyone';
}

/**
 * Whether `viewer` sees only some of the organization's users. The setting may name only
 * role:everyone or role:members, so the limit falls exactly on guests when it names members.
 */
export async function limitsUserAccess(db: Db, realm: RealmRow, viewer: Pick<UserRow, 'role'>): Promise<boolean> {
  if (viewer.role !== Role.GUEST) return false;
  return (await accessGroupName(db, realm)) !== 'role:everyone';
}

/**
 * The humans a limited viewer can access: themself, the active subscribers of the channels they
 * are subscribed to, and everyone in a direct message conversation with them (one-on-one or group,
 * deactivated or not). Bots are not listed: every bot is accessible.
 */
export async function accessibleHumanIds(db: Db, viewer: Pick<UserRow, 'id' | 'realm_id'>): Promise<Set<number>> {
  return new Set([viewer.id, ...(await channelPeerIds(db, viewer.id)), ...(await directMessagePartnerIds(db, viewer))]);
}

/** The active subscribers of the channels `userId` is subscribed to (themself among them when active). */
export async function channelPeerIds(db: Db, userId: number): Promise<Set<number>> {
  const subscribers = await db
    .selectFrom('subscriptions as mine')
    .innerJoin('subscriptions as other', 'other.stream_id', 'mine.stream_id')
    .innerJoin('users as u', 'u.id', 'other.user_id')
    .select('other.user_id')
    .distinct()
    .where('mine.user_id', '=', userId)
    .where('mine.active', '=', true)
    .where('other.active', '=', true)
    .where('u.is_active', '=', true)
    .execute();
  return new Set(subscribers.map((row) => row.user_id));
}

/** Everyone in a direct message conversation (one-on-one or group) with `user`, themself included. */
export async function directMessagePartnerIds(db: Db, user: Pick<UserRow, 'id' | 'realm_id'>): Promise<Set<number>> {
  const conversations = await db
    .selectFrom('messages')
    .select('dm_key')
    .distinct()
    .where('realm_id', '=', user.realm_id)
    .where('dm_key', 'is not', null)
    .where(sql<boolean>`string_to_array(dm_key, ',')::int[] @> ARRAY[${user.id}]::int[]`)
    .execute();
  const ids = new Set<number>();
  for (const row of conversations) for (const id of (row.dm_key ?? '').split(',')) ids.add(Number(id));
  return ids;
}

/** For `viewer`, the users they cannot access (an empty set when nothing is limited). */
export async function inaccessibleUserIds(db: Db, realm: RealmRow, viewer: UserRow, users: readonly UserRow[]): Promise<Set<number>> {
  if (!(await limitsUserAccess(db, realm, viewer))) return new Set();
  const accessible = await accessibleHumanIds(db, viewer);
  return new Set(users.filter((u) => !u.is_bot && !accessible.has(u.id)).map((u) => u.id));
}

/** The real server's check_can_access_user: whether `viewer` may know `target` at all. */
export async function canAccessUser(db: Db, realm: RealmRow, viewer: UserRow, target: UserRow): Promise<boolean> {
  if (target.is_bot || target.id === viewer.id) return true;
  if (!(await limitsUserAccess(db, realm, viewer))) return true;
  return (await accessibleHumanIds(db, viewer)).has(target.id);
}

export const INACCESSIBLE_USER_NAME = 'Unknown user';
export const INACCESSIBLE_USER_AVATAR = '/static/images/unknown-user-avatar.png';

/** What a limited viewer is shown of a user they cannot access: a placeholder that keeps only the id. */
export function inaccessibleUserDict(userId: number, realmHost: string): Record<string, unknown> {
  return {
    email: `user${userId}@${realmHost}`,
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_billing_admin: false,
    role: Role.MEMBER,
    is_bot: false,
    full_name: INACCESSIBLE_USER_NAME,
    timezone: '',
    is_active: true,
    date_joined: '1970-01-01T00:00:00+00:00',
    delivery_email: null,
    avatar_url: INACCESSIBLE_USER_AVATAR,
    profile_data: {},
  };
}

/**
 * Who, among limited guests, may hear about `targetId` (its changes, status, presence): the guests
 * sharing a channel or a direct message conversation with them. null when no one is limited
 * (everyone hears) or the target is a bot; non-guests always hear.
 */
export async function guestsWhoCanAccess(db: Db, targetId: number): Promise<ReadonlySet<number> | null> {
  const target = await db.selectFrom('users').select(['id', 'realm_id', 'is_bot']).where('id', '=', targetId).executeTakeFirst();
  if (!target || target.is_bot) return null;
  const realm = await db.selectFrom('realms').selectAll().where('id', '=', target.realm_id).executeTakeFirst();
  if (!realm || (await accessGroupName(db, realm)) === 'role:everyone') return null;
  return accessibleHumanIds(db, target);
}

/** Whether a recipient may be told about a user, given guestsWhoCanAccess's answer for that user. */
export function mayHearAbout(recipient: Pick<UserRow, 'id' | 'role'>, guests: ReadonlySet<number> | null): boolean {
  return guests === null || recipient.role !== Role.GUEST || guests.has(recipient.id);
}
