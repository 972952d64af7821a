import { forgetBotStorage } from './bot-storage.js';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { Role } from '../domain/roles.js';
import { decideUser, nameForUniqueness, validateFullName, type Actor, type UserCommand, type UserState } from '../domain/users/decider.js';
import type { BotService, UserCreated, UserEvent } from '../domain/users/events.js';
import { activeUserNamed, countActiveOwners, getUserById, getUserByEmail, type UserRow } from '../read/users.js';
import { getRealm, realmHost, type RealmRow } from '../read/realm.js';
import { canAccessUser } from '../read/user-access.js';
import { isAdminRole } from '../domain/roles.js';
import { generateApiKey, hashPassword } from './secrets.js';
import { defaultStreamSubscriptions } from './channels.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import type { StreamAppend } from '../eventstore/types.js';
import { fullMembersAppends } from './full-members.js';
import { destroyEndedKeys } from './ended-keys.js';
import { revocationsWithInviters } from './invites.js';
import type { FullMemberCandidate } from '../domain/user-groups/full-members.js';

export const userStream = (userId: number) => `user-${userId}`;

const EMAIL_PATTERN = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+\.[^\s@<>(),;:"[\]\\]+$/;

export interface NewUser {
  email: string;
  full_name: string;
  role: number;
  password?: string | null;
  bot_type?: number | null;
  bot_owner_id?: number | null;
  timezone?: string;
  /** channels to join instead of the realm's default channels (an invitation's) */
  stream_ids?: readonly number[];
  /** One of the server's own bots (see system-bots.ts). */
  is_system_bot?: boolean;
  /** An outgoing webhook bot's service. */
  service?: BotService;
}

export function toUserState(row: UserRow): UserState {
  return {
    user_id: row.id,
    role: row.role,
    is_active: row.is_active,
    is_bot: row.is_bot,
    bot_owner_id: row.bot_owner_id,
    full_name: row.full_name,
    is_billing_admin: row.is_billing_admin,
    timezone: row.timezone,
    avatar_source: row.avatar_source,
    avatar_version: row.avatar_version,
    default_sending_stream_id: row.default_sending_stream_id,
    default_events_register_stream_id: row.default_events_register_stream_id,
    default_all_public_streams: row.default_all_public_streams,
  };
}

/** Whether `userId` was erased (src/services/erasure.ts): one indexed look-up on their stream. */
export async function isErased(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('events').select('position').where('stream_id', '=', userStream(userId)).where('type', '=', 'UserErased').executeTakeFirst();
  return row !== undefined;
}

/**
 * An erased person stays the real server's deleted user for good: nothing may write new personal
 * data for them (a name, an address, profile values, an avatar) or bring the account back, since a
 * new `user:<id>` key would start holding what the erasure promised to forget.
 */
export async function refuseErased(db: Db, userId: number): Promise<void> {
  if (await isErased(db, userId)) throw errors.userErased();
}

export async function requireUser(db: Db, userId: number, realmId: number): Promise<UserRow> {
  const user = await getUserById(db, userId);
  if (!user || user.realm_id !== realmId) throw errors.noSuchUser();
  return user;
}

export interface AccessOptions {
  /** administering the user (an administrator, or the bot's owner) rather than reading it */
  forAdmin: boolean;
  allowBots?: boolean;
  allowDeactivated?: boolean;
}

/**
 * The real server's access_user_by_id: the organization's account with that id ('No such user'
 * otherwise, and for a bot unless bots are allowed), active unless deactivated ones are allowed
 * ('User is deactivated'), and 'Insufficient permission' for a caller who may not administer it
 * or, only reading, may not access it (limited user access for guests, read/user-access.ts).
 */
export async function accessUserById(db: Db, realm: RealmRow, actor: UserRow, targetId: number, options: AccessOptions): Promise<UserRow> {
  const target = await getUserById(db, targetId);
  if (!target || target.realm_id !== realm.id || target.is_system_bot) throw errors.noSuchUser();
  return checkUserAccess(db, realm, actor, target, options);
}

export async function checkUserAccess(db: Db, realm: RealmRow, actor: UserRow, target: UserRow, options: AccessOptions): Promise<UserRow> {
  if (target.is_bot && !options.allowBots) throw errors.noSuchUser();
  if (!target.is_active && !options.allowDeactivated) throw errors.badRequest('User is deactivated');
  const allowed = options.forAdmin
    ? isAdminRole(actor.role) || (target.is_bot && target.bot_owner_id === actor.id)
    : await canAccessUser(db, realm, actor, target);
  if (!allowed) throw errors.badRequest('Insufficient permission');
  return target;
}

/**
 * require_unique_names: no other account of the organization, active or not, human or bot, may
 * have the same name once compatibility-normalized and case-folded.
 */
export async function checkNameUnique(db: Db, realm: RealmRow, fullName: string, exceptUserId?: number): Promise<void> {
  if ((realm.properties as Record<string, unknown>).require_unique_names !== true) return;
  const wanted = nameForUniqueness(fullName);
  let query = db.selectFrom('users').select('full_name').where('realm_id', '=', realm.id).where('is_system_bot', '=', false);
  if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
  const names = await query.execute();
  if (names.some((row) => nameForUniqueness(row.full_name) === wanted)) throw errors.badRequest('Unique names required in this organization.');
}

/** Creates a human or bot account; a new account takes the organization's default settings. */
export async function createUser(
  ctx: ServiceContext,
  meta: RequestMeta,
  input: NewUser,
  /** more appends of the same command (e.g. the invitation it accepts); may throw to refuse */
  more?: (userId: number) => Promise<StreamAppend[]>,
): Promise<{ user_id: number; api_key: string }> {
  const email = input.email.trim();
  if (!EMAIL_PATTERN.test(email) || email.length > 254) throw errors.badRequest(`Invalid address: ${email}`);
  const full_name = validateFullName(input.full_name);
  const realm = await getRealm(ctx.db, meta.realmId);
  if (!realm) throw errors.badRequest('Invalid organization');
  await checkNameUnique(ctx.db, realm, full_name);
  const api_key = generateApiKey();
  const password_hash = input.password ? await hashPassword(input.password) : null;
  const user_id = await ctx.commands.nextId('user_id_seq');
  const isBot = input.bot_type !== undefined && input.bot_type !== null;
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    if (await getUserByEmail(ctx.db, meta.realmId, email, realmHost(realm))) {
      throw errors.badRequest(`Email '${email}' already in use`);
    }
    const event: UserCreated = {
      type: 'UserCreated',
      data: {
        user_id,
        realm_id: meta.realmId,
        email,
        delivery_email: email,
        full_name,
        role: isBot ? Role.MEMBER : input.role,
        is_bot: isBot,
        ...(isBot && input.is_system_bot ? { is_system_bot: true } : {}),
        bot_type: isBot ? input.bot_type! : null,
        bot_owner_id: isBot ? input.bot_owner_id ?? null : null,
        api_key,
        password_hash,
        timezone: input.timezone ?? '',
        date_joined: meta.now.toISOString(),
        settings: { ...realm.user_settings_defaults },
        ...(isBot && input.service ? { service: input.service } : {}),
      },
    };
    // A member past the waiting period (at once by default) is a full member from the start.
    const fullMembers = event.data.is_system_bot
      ? []
      : await fullMembersAppends(ctx, meta.realmId, [{ user_id, role: event.data.role, is_active: true, date_joined: event.data.date_joined }], meta.now, { newAccount: true });
    // A new human account joins the organization's default channels in the same command.
    const defaults = isBot ? [] : await defaultStreamSubscriptions(ctx.db, meta.realmId, user_id, input.stream_ids);
    const extra = more ? await more(user_id) : [];
    return {
      appends: [{ streamId: userStream(user_id), expectedVersion: -1, events: [event] }, ...fullMembers, ...defaults, ...extra],
      result: { user_id, api_key },
    };
  });
  return result;
}

/** Applies one user command with optimistic concurrency on the user's stream. */
export async function changeUser(
  ctx: ServiceContext,
  meta: RequestMeta,
  userId: number,
  build: (state: UserState, activeOwners: number) => UserCommand,
): Promise<void> {
  await changeUserAtOnce(ctx, meta, userId, (state, owners) => [build(state, owners)]);
}

/**
 * Several changes of one user in one append: all or nothing. The commands are decided against the
 * same state (each changes a field of its own); `more` adds events of other kinds for the same row.
 */
export async function changeUserAtOnce(
  ctx: ServiceContext,
  meta: RequestMeta,
  userId: number,
  build: (state: UserState, activeOwners: number) => UserCommand[],
  more: (row: UserRow) => Promise<UserEvent[]> = async () => [],
): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireUser(ctx.db, userId, meta.realmId);
    // The server manages its own bots; to the organization they are not its users to change.
    if (row.is_system_bot) throw errors.noSuchUser();
    await refuseErased(ctx.db, userId);
    const owners = await countActiveOwners(ctx.db, meta.realmId);
    const state = toUserState(row);
    const events = [...build(state, owners).flatMap((command) => decideUser(command, state)), ...(await more(row))];
    // A role change moves the user into or out of role:fullmembers after the role's own group.
    const roleChange = events.find((event) => event.type === 'UserRoleChanged');
    const fullMembers = roleChange
      ? await fullMembersAppends(ctx, meta.realmId, [{ ...candidateOf(row), role: roleChange.data.role }], meta.now)
      : [];
    return { appends: [{ streamId: userStream(userId), expectedVersion: row.version, events }, ...fullMembers], result: undefined };
  });
}

/**
 * Deactivates an account and, for a human, the active bots they own, in one append: as on the real
 * server, a deactivated user's bots stop working with them (reactivating the user does not bring the
 * bots back; each is reactivated on its own).
 */
export async function deactivateUser(ctx: ServiceContext, meta: RequestMeta, userId: number, actor: Actor, own = false): Promise<void> {
  const { result: { bots, endedKeys } } = await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireUser(ctx.db, userId, meta.realmId);
    if (row.is_system_bot) throw errors.noSuchUser();
    const owners = await countActiveOwners(ctx.db, meta.realmId);
    const ownCheck = own ? { active_user_count: await countActiveAccounts(ctx.db, meta.realmId) } : undefined;
    const events = decideUser({ type: 'DeactivateUser', actor, active_owner_count: owners, own: ownCheck }, toUserState(row));
    const appends: StreamAppend[] = [];
    const bots: number[] = [];
    const leaving: UserRow[] = [];
    // As do_deactivate_user: the bots go first, then their owner (clients hear of them in that order).
    if (!row.is_bot) {
      for (const bot of await activeBotsOwnedBy(ctx.db, row.id)) {
        appends.push({ streamId: userStream(bot.id), expectedVersion: bot.version, events: [{ type: 'UserDeactivated', data: { user_id: bot.id } }] });
        bots.push(bot.id);
        leaving.push(bot);
      }
    }
    if (row.is_bot) bots.push(row.id);
    leaving.push(row);
    // Their invitations end before the account does: clients hear invites_changed first, as from the real server.
    const invitations = await revocationsWithInviters(ctx, meta.realmId, events.length > 0 ? leaving.map((u) => u.id) : [], meta.now);
    appends.push(...invitations.appends);
    appends.push({ streamId: userStream(userId), expectedVersion: row.version, events });
    // They leave role:fullmembers as they leave their role's group.
    appends.push(...(await fullMembersAppends(ctx, meta.realmId, leaving.map((u) => ({ ...candidateOf(u), is_active: false })), meta.now)));
    return { appends, result: { bots, endedKeys: invitations.endedKeys } };
  });
  await destroyEndedKeys(ctx, endedKeys);
  // A bot's storage is forgotten with the bot (docs/DECISIONS.md).
  for (const botId of bots) await forgetBotStorage(ctx, meta, botId);
}

/** POST /users/{id}/reactivate: the bot-name and bot-owner facts the decider needs come along. */
export async function reactivateUser(ctx: ServiceContext, meta: RequestMeta, userId: number, actor: Actor): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireUser(ctx.db, userId, meta.realmId);
    if (row.is_system_bot) throw errors.noSuchUser();
    await refuseErased(ctx.db, userId);
    const owner = row.is_bot && row.bot_owner_id !== null ? await getUserById(ctx.db, row.bot_owner_id) : undefined;
    const events = decideUser({
      type: 'ReactivateUser',
      actor,
      active_name_taken: row.is_bot && !row.is_active && (await activeUserNamed(ctx.db, row.realm_id, row.full_name.trim())),
      bot_owner_active: owner?.is_active ?? false,
    }, toUserState(row));
    const fullMembers = events.length > 0 ? await fullMembersAppends(ctx, meta.realmId, [{ ...candidateOf(row), is_active: true }], meta.now) : [];
    return { appends: [{ streamId: userStream(userId), expectedVersion: row.version, events }, ...fullMembers], result: undefined };
  });
}

function candidateOf(row: UserRow): FullMemberCandidate {
  return { user_id: row.id, role: row.role, is_active: row.is_active, date_joined: row.date_joined };
}

/** The organization's active accounts, bots included (the server's own bots are not the organization's). */
async function countActiveAccounts(db: Db, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('realm_id', '=', realmId)
    .where('is_active', '=', true)
    .where('is_system_bot', '=', false)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function activeBotsOwnedBy(db: Db, ownerId: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('bot_owner_id', '=', ownerId).where('is_bot', '=', true).where('is_active', '=', true).orderBy('id').execute();
}

export function actorOf(user: UserRow): Actor {
  return { user_id: user.id, role: user.role };
}
