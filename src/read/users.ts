import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { UsersTable } from '../db/schema.js';
import { Role, isAdminRole, isModeratorOrAbove } from '../domain/roles.js';
import { isSpectator } from '../visibility.js';

export type UserRow = Selectable<UsersTable>;

export interface Viewer {
  user_id: number;
  role: number;
  realm_id: number;
}

export async function getUserById(db: Db, userId: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
}

export async function getUsersByIds(db: Db, ids: number[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
}

/** The organization's accounts; the system bots are not among them (register lists them as cross_realm_bots). */
export async function listUsers(db: Db, realmId: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('is_system_bot', '=', false).orderBy('id').execute();
}

/** Whether an active account (human or bot) already has this full name; bots' names must be unique among them. */
export async function activeUserNamed(db: Db, realmId: number, fullName: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_active', '=', true)
    .where('full_name', '=', fullName)
    .executeTakeFirst();
  return row !== undefined;
}

export async function countActiveOwners(db: Db, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('role', '=', Role.OWNER)
    .where('is_active', '=', true)
    .where('is_bot', '=', false)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The address a client uses to name a user: the real one only when everyone may see it. */
export function apiEmail(user: UserRow, realmHost: string): string {
  if (user.is_bot || emailVisibilityOf(user) === 1) return user.delivery_email;
  return `user${user.id}@${realmHost}`;
}

export function emailVisibilityOf(user: UserRow): number {
  return Number((user.settings as Record<string, unknown>).email_address_visibility ?? 1);
}

/** Whether `viewer` may see `target`'s real address, by the target's email_address_visibility. */
export function canSeeDeliveryEmail(viewer: Viewer, target: UserRow): boolean {
  // A spectator never sees a real address (the real server's format_user_row without an acting user).
  if (isSpectator(viewer)) return false;
  if (target.is_bot || viewer.user_id === target.id) return true;
  switch (emailVisibilityOf(target)) {
    case 1: return true;
    case 2: return viewer.role !== Role.GUEST;
    case 3: return isAdminRole(viewer.role);
    case 5: return isModeratorOrAbove(viewer.role);
    default: return false;
  }
}

export function findUserByEmail(users: UserRow[], email: string, realmHost: string): UserRow | undefined {
  const wanted = email.toLowerCase();
  return users.find((u) => u.delivery_email.toLowerCase() === wanted || apiEmail(u, realmHost).toLowerCase() === wanted);
}

export async function getUserByEmail(db: Db, realmId: number, email: string, realmHost: string): Promise<UserRow | undefined> {
  const wanted = email.toLowerCase();
  const fake = /^user(\d+)@(.+)$/.exec(wanted);
  if (fake && fake[2] === realmHost.toLowerCase()) {
    const user = await getUserById(db, Number(fake[1]));
    if (user && user.realm_id === realmId && apiEmail(user, realmHost).toLowerCase() === wanted) return user;
  }
  const user = await db
    .selectFrom('users')
    .selectAll()
    .where('realm_id', '=', realmId)
    .where((eb) => eb(eb.fn('lower', ['delivery_email']), '=', wanted))
    .executeTakeFirst();
  return user;
}

/**
 * getUserByEmail for a request by `viewer`: a real address the viewer may not see names no one,
 * exactly as an unknown address does, so that its owner cannot be confirmed through it. The
 * address clients are shown (apiEmail) always works.
 */
export async function getUserByEmailFor(db: Db, viewer: Viewer, email: string, realmHost: string): Promise<UserRow | undefined> {
  const user = await getUserByEmail(db, viewer.realm_id, email, realmHost);
  if (!user) return undefined;
  if (apiEmail(user, realmHost).toLowerCase() === email.toLowerCase()) return user;
  return canSeeDeliveryEmail(viewer, user) ? user : undefined;
}

export function gravatarUrl(email: string, version: number): string {
  const hash = createHash('md5').update(email.trim().toLowerCase()).digest('hex');
  return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${version}`;
}

export interface FormatOptions {
  clientGravatar: boolean;
  includeCustomProfileFields: boolean;
  realmHost: string;
  /** The client declared user_avatar_url_field_optional: the field may be left out. */
  avatarUrlOptional?: boolean;
}

/** A User object as SPEC.md describes it, as `viewer` may see it. */
export function formatUser(user: UserRow, viewer: Viewer, options: FormatOptions): Record<string, unknown> {
  const seesEmail = canSeeDeliveryEmail(viewer, user);
  const out: Record<string, unknown> = {
    user_id: user.id,
    delivery_email: seesEmail ? user.delivery_email : null,
    email: apiEmail(user, options.realmHost),
    full_name: user.full_name,
    date_joined: user.date_joined,
    is_active: user.is_active,
    is_owner: user.role === Role.OWNER,
    is_admin: isAdminRole(user.role),
    is_guest: user.role === Role.GUEST,
    is_billing_admin: user.is_billing_admin,
    is_bot: user.is_bot,
    bot_type: user.is_bot ? user.bot_type : null,
    role: user.role,
    timezone: user.timezone,
    avatar_version: user.avatar_version,
  };
  if (user.is_bot) out.bot_owner_id = user.bot_owner_id;
  const avatar = avatarUrlFor(user, seesEmail, options.clientGravatar);
  if (avatar !== undefined || !options.avatarUrlOptional) out.avatar_url = avatar ?? null;
  if (!user.is_bot && options.includeCustomProfileFields) out.profile_data = user.profile_data;
  return out;
}

/** null: the client computes the Gravatar URL itself (client_gravatar and a visible real address). */
export function avatarUrlFor(user: UserRow, seesEmail: boolean, clientGravatar: boolean, medium = false): string | null | undefined {
  if (user.avatar_source === 'G') {
    if (clientGravatar && seesEmail) return null;
    const url = gravatarUrl(user.delivery_email, user.avatar_version);
    return medium ? `${url}&s=500` : url;
  }
  return `/user_avatars/${user.realm_id}/${user.id}${medium ? '-medium' : ''}.png?version=${user.avatar_version}`;
}
