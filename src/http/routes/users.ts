import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { ApiError, errors } from '../../domain/errors.js';
import { validateFullName, type UserCommand } from '../../domain/users/decider.js';
import { generateApiKey } from '../../services/secrets.js';
import { ALL_ROLES, Role, isAdminRole } from '../../domain/roles.js';
import { botDomain, realmHost } from '../../read/realm.js';
import { activeUserNamed, apiEmail, formatUser, getUserByEmailFor, getUserById, listUsers, type UserRow } from '../../read/users.js';
import { accessUserById, actorOf, changeUser, changeUserAtOnce, checkNameUnique, checkUserAccess, createUser, deactivateUser, reactivateUser } from '../../services/users.js';
import { inaccessibleUserDict, inaccessibleUserIds } from '../../read/user-access.js';
import { createProfileField, reorderProfileFields, profileDataEvents, setProfileData } from '../../services/profile-fields.js';
import type { AppServices } from '../services.js';
import { fileParts } from './attachments.js';
import { sendFileBytes } from '../file-response.js';
import { mailerFor } from '../../services/mailer.js';
import { maxReceivedMessageId } from '../../read/messages.js';
import { listProfileFields } from '../../read/profile-fields.js';
import { MAX_AVATAR_FILE_SIZE_MIB, avatarChangesDisabled, avatarContentType, avatarPathId, avatarStorage, removeAvatar, uploadAvatar } from '../../services/avatars.js';
import { administeredBots, botDefaults, channelNames } from '../../event-queue/areas/users.js';
import { avatarUrlFor as avatarUrl } from '../../read/users.js';
import { botDefaultChannel, botServiceChange, createBot } from '../../services/bots.js';

interface UserQuery {
  client_gravatar?: boolean;
  client_avatarhost?: boolean;
  include_custom_profile_fields?: boolean;
}
const userQuery = {
  client_gravatar: { type: 'boolean' },
  client_avatarhost: { type: 'boolean' },
  include_custom_profile_fields: { type: 'boolean' },
} as const;

/** A bot the user may administer (its owner, or an administrator), as the real server's access_bot_by_id. */
async function accessBot(ctx: AppServices['ctx'], user: UserRow, botId: number): Promise<UserRow> {
  const bot = await getUserById(ctx.db, botId);
  // The server's own bots live outside the organization on the real server: no organization's bots.
  if (!bot || bot.realm_id !== user.realm_id || !bot.is_bot || bot.is_system_bot) throw errors.badRequest('No such bot');
  if (!isAdminRole(user.role) && bot.bot_owner_id !== user.id) throw errors.badRequest('Insufficient permission');
  return bot;
}

/** GET /user_avatars/<realm_id>/<user_id>[-medium].png: the current uploaded avatar (public, like the real server's). */
export async function avatarDownloadRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = avatarStorage(ctx);
  const notFound = () => new ApiError('BAD_REQUEST', 404, 'File not found');
  app.route({
    method: 'GET',
    url: '/user_avatars/:realm_id/:file',
    config: { auth: 'none', limited: true },
    handler: async (request, reply) => {
      const { realm_id, file } = request.params as { realm_id: string; file: string };
      const match = /^(\d+)(-medium)?\.png$/.exec(file);
      if (!/^\d+$/.test(realm_id) || !match) throw notFound();
      const target = await getUserById(ctx.db, Number(match[1]));
      if (!target || target.realm_id !== Number(realm_id) || target.avatar_source !== 'U') throw notFound();
      const pathId = avatarPathId(target.realm_id, target.id, target.avatar_version);
      const data = await storage.read(pathId);
      if (!data) throw notFound();
      reply
        .header('Content-Type', (await avatarContentType(data)) ?? 'application/octet-stream')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'public, max-age=86400');
      return sendFileBytes(request, reply, data, { identity: pathId });
    },
  });
}

export default async function userRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = avatarStorage(ctx);

  defineRoute(app, {
    method: 'POST',
    url: '/users/me/avatar',
    files: { maxMib: () => MAX_AVATAR_FILE_SIZE_MIB },
    handler: async ({ request, user, realm, meta }) => {
      const parts = fileParts(request);
      if (parts.length !== 1) throw errors.badRequest('You must upload exactly one avatar.');
      if (avatarChangesDisabled(realm, user)) throw errors.badRequest('Avatar changes are disabled in this organization.');
      const part = parts[0]!;
      const updated = await uploadAvatar(ctx, storage, meta, actorOf(user), user.id, part._buf ?? (await part.toBuffer()));
      return { avatar_url: avatarUrl(updated, true, false) };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/users/me/avatar',
    handler: async ({ user, realm, meta }) => {
      if (avatarChangesDisabled(realm, user)) throw errors.badRequest('Avatar changes are disabled in this organization.');
      const updated = await removeAvatar(ctx, meta, actorOf(user), user.id);
      return { avatar_url: avatarUrl(updated, true, false) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bots',
    handler: async ({ user }) => {
      // The real server lists the caller's own active bots here, even for administrators.
      const bots = (await administeredBots(ctx.db, { ...user, role: Role.MEMBER })).filter((b) => b.is_active);
      const names = await channelNames(ctx.db, bots.flatMap((b) => [b.default_sending_stream_id, b.default_events_register_stream_id]));
      return {
        bots: bots.map((b) => ({
          username: b.delivery_email,
          full_name: b.full_name,
          api_key: b.api_key,
          avatar_url: avatarUrl(b, true, false),
          ...botDefaults(b, names),
        })),
      };
    },
  });

  defineRoute<{
    bot_id: number; full_name?: string; role?: number; bot_owner_id?: number;
    default_sending_stream?: string; default_events_register_stream?: string; default_all_public_streams?: boolean;
    service_payload_url?: unknown; service_interface?: number; config_data?: Record<string, unknown>;
  }>(app, {
    method: 'PATCH',
    url: '/bots/:bot_id',
    files: { maxMib: () => MAX_AVATAR_FILE_SIZE_MIB },
    params: {
      properties: {
        bot_id: { type: 'integer' }, full_name: { type: 'string' }, role: { type: 'integer', enum: [...ALL_ROLES] }, bot_owner_id: { type: 'integer' },
        default_sending_stream: { type: 'string' }, default_events_register_stream: { type: 'string' }, default_all_public_streams: { type: 'boolean' },
        // JSON-encoded, as the real server reads it; checked as a URL by the service.
        service_payload_url: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }, { type: 'array' }, { type: 'object' }] },
        service_interface: { type: 'integer' },
        config_data: { type: 'object', additionalProperties: { type: 'string' } },
      },
      required: ['bot_id'],
    },
    handler: async ({ request, params, user, realm, meta }) => {
      let bot = await accessBot(ctx, user, params.bot_id);
      const parts = fileParts(request);
      if (parts.length > 1) throw errors.badRequest('You may only upload one file at a time');
      // Every field's checks first, then one append for all of them.
      const changes: Array<(activeOwners: number) => UserCommand> = [];
      if (params.full_name !== undefined) {
        const name = validateFullName(params.full_name);
        if (name !== bot.full_name) {
          await checkNameUnique(ctx.db, realm, name, bot.id);
          if (await activeUserNamed(ctx.db, user.realm_id, name)) throw errors.badRequest('Name is already in use!');
          changes.push(() => ({ type: 'RenameUser', actor: actorOf(user), full_name: name }));
        }
      }
      if (params.role !== undefined && params.role !== bot.role) {
        const role = params.role;
        changes.push((owners) => ({ type: 'ChangeRole', actor: actorOf(user), role, active_owner_count: owners }));
      }
      if (params.bot_owner_id !== undefined) {
        const owner = await getUserById(ctx.db, params.bot_owner_id);
        const newOwner = owner && owner.realm_id === user.realm_id ? { user_id: owner.id, is_active: owner.is_active, is_bot: owner.is_bot } : null;
        changes.push(() => ({ type: 'ChangeBotOwner', actor: actorOf(user), new_owner: newOwner }));
      }
      for (const property of ['default_sending_stream', 'default_events_register_stream'] as const) {
        const name = params[property];
        if (name === undefined) continue;
        const value = await botDefaultChannel(ctx, user, name);
        changes.push(() => ({ type: 'ChangeBotDefault', actor: actorOf(user), property, value }));
      }
      if (params.default_all_public_streams !== undefined) {
        const value = params.default_all_public_streams;
        changes.push(() => ({ type: 'ChangeBotDefault', actor: actorOf(user), property: 'default_all_public_streams', value }));
      }
      if (params.service_payload_url !== undefined) {
        const change = await botServiceChange(ctx, user, bot, params.service_payload_url, params.service_interface ?? 1);
        changes.push(() => change);
      }
      if (changes.length > 0) await changeUserAtOnce(ctx, meta, bot.id, (_s, owners) => changes.map((change) => change(owners)));
      if (parts.length === 1) {
        await uploadAvatar(ctx, storage, meta, actorOf(user), bot.id, parts[0]!._buf ?? (await parts[0]!.toBuffer()));
      }
      bot = (await getUserById(ctx.db, bot.id))!;
      const owner = bot.bot_owner_id === null ? undefined : await getUserById(ctx.db, bot.bot_owner_id);
      return {
        full_name: bot.full_name,
        avatar_url: avatarUrl(bot, true, false),
        // As the real server: what the request said about the service, not what the bot has.
        service_interface: params.service_interface ?? 1,
        service_payload_url: params.service_payload_url ?? null,
        config_data: params.config_data ?? null,
        ...botDefaults(bot, await channelNames(ctx.db, [bot.default_sending_stream_id, bot.default_events_register_stream_id])),
        // The address clients know the owner by (as the real server answers), never a hidden real one.
        ...(owner ? { bot_owner: apiEmail(owner, realmHost(realm)) } : {}),
      };
    },
  });

  defineRoute<{ bot_id: number }>(app, {
    method: 'POST',
    url: '/bots/:bot_id/api_key/regenerate',
    params: { properties: { bot_id: { type: 'integer' } }, required: ['bot_id'] },
    handler: async ({ params, user, meta }) => {
      const bot = await accessBot(ctx, user, params.bot_id);
      const api_key = generateApiKey();
      await changeUser(ctx, meta, bot.id, () => ({ type: 'RegenerateApiKey', actor: actorOf(user), api_key }));
      return { api_key };
    },
  });

  defineRoute<{ bot_id: number }>(app, {
    method: 'DELETE',
    url: '/bots/:bot_id',
    params: { properties: { bot_id: { type: 'integer' } }, required: ['bot_id'] },
    handler: async ({ params, user, meta }) => {
      const bot = await accessBot(ctx, user, params.bot_id);
      // Deactivating a deactivated bot is a success that changes nothing, as on the real server.
      if (!bot.is_active) return;
      // The same command as DELETE /users/{id}: it also forgets the bot's storage.
      await deactivateUser(ctx, meta, bot.id, actorOf(user));
    },
  });
  const formatFor = (viewer: UserRow, realmUrlHost: string, q: UserQuery) => (target: UserRow) =>
    formatUser(target, { user_id: viewer.id, role: viewer.role, realm_id: viewer.realm_id }, {
      clientGravatar: q.client_avatarhost ?? q.client_gravatar ?? true,
      includeCustomProfileFields: q.include_custom_profile_fields ?? false,
      realmHost: realmUrlHost,
    });

  defineRoute<UserQuery>(app, {
    method: 'GET',
    url: '/users',
    params: { properties: { ...userQuery } },
    handler: async ({ params, user, realm }) => {
      const users = await listUsers(ctx.db, realm.id);
      // A guest limited by can_access_all_users_group sees the others as "Unknown user".
      const hidden = await inaccessibleUserIds(ctx.db, realm, user, users);
      const format = formatFor(user, realmHost(realm), params);
      return { members: users.map((u) => (hidden.has(u.id) ? inaccessibleUserDict(u.id, realmHost(realm)) : format(u))) };
    },
  });

  // The real server formats the caller with client_gravatar off and takes no parameters.
  defineRoute(app, {
    method: 'GET',
    url: '/users/me',
    handler: async ({ user, realm }) => {
      const me = formatUser(user, { user_id: user.id, role: user.role, realm_id: realm.id }, { clientGravatar: false, includeCustomProfileFields: false, realmHost: realmHost(realm) });
      const { bot_type: _botType, bot_owner_id: _botOwner, ...documented } = me;
      return { ...documented, profile_data: user.profile_data, max_message_id: await maxReceivedMessageId(ctx.db, user) };
    },
  });

  defineRoute<UserQuery & { user: string }>(app, {
    method: 'GET',
    url: '/users/:user',
    params: { properties: { ...userQuery, user: { type: 'string' } }, required: ['user'] },
    handler: async ({ params, user, realm }) => {
      const options = { forAdmin: false, allowBots: true, allowDeactivated: true };
      let target: UserRow | undefined;
      if (/^\d+$/.test(params.user)) {
        target = await accessUserById(ctx.db, realm, user, Number(params.user), options);
      } else {
        target = await getUserByEmailFor(ctx.db, { user_id: user.id, role: user.role, realm_id: realm.id }, params.user, realmHost(realm));
        if (!target || target.realm_id !== realm.id || target.is_system_bot) throw errors.noSuchUser();
        await checkUserAccess(ctx.db, realm, user, target, options);
      }
      return { user: formatFor(user, realmHost(realm), params)(target) };
    },
  });

  defineRoute<{ email: string; password?: string; full_name: string }>(app, {
    method: 'POST',
    url: '/users',
    params: {
      properties: { email: { type: 'string' }, password: { type: 'string' }, full_name: { type: 'string' } },
      required: ['email', 'full_name'],
    },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      const created = await createUser(ctx, meta, { email: params.email, full_name: params.full_name, role: Role.MEMBER, password: params.password });
      return { user_id: created.user_id };
    },
  });

  defineRoute<{
    full_name: string; short_name: string; bot_type?: number; service_name?: string; payload_url?: unknown; interface_type?: number; config_data?: unknown;
    default_sending_stream?: string; default_events_register_stream?: string; default_all_public_streams?: boolean;
  }>(app, {
    method: 'POST',
    url: '/bots',
    files: { maxMib: () => MAX_AVATAR_FILE_SIZE_MIB },
    params: {
      properties: {
        full_name: { type: 'string' },
        short_name: { type: 'string' },
        bot_type: { type: 'integer' },
        service_name: { type: 'string' },
        // JSON-encoded, as the real server reads it; checked as a URL by the service.
        payload_url: { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }, { type: 'array' }, { type: 'object' }] },
        interface_type: { type: 'integer' },
        config_data: { type: 'object' },
        default_sending_stream: { type: 'string' },
        default_events_register_stream: { type: 'string' },
        default_all_public_streams: { type: 'boolean' },
      },
      required: ['full_name', 'short_name'],
    },
    handler: async ({ request, params, user, realm, meta }) => {
      const parts = fileParts(request);
      const created = await createBot(ctx, meta, user, realm, { ...params, file_count: parts.length });
      if (parts.length === 1) {
        await uploadAvatar(ctx, storage, meta, actorOf(user), created.user_id, parts[0]!._buf ?? (await parts[0]!.toBuffer()));
      }
      const bot = (await getUserById(ctx.db, created.user_id))!;
      return {
        user_id: created.user_id,
        api_key: created.api_key,
        avatar_url: avatarUrl(bot, true, false),
        ...botDefaults(bot, await channelNames(ctx.db, [bot.default_sending_stream_id, bot.default_events_register_stream_id])),
      };
    },
  });

  defineRoute<{ user_id: number; full_name?: string; role?: number; profile_data?: Array<{ id: number; value: unknown }> }>(app, {
    method: 'PATCH',
    url: '/users/:user_id',
    params: {
      properties: {
        user_id: { type: 'integer' },
        full_name: { type: 'string' },
        // Checked before anything else, as the real server's parameter validator does.
        role: { type: 'integer', enum: [...ALL_ROLES] },
        profile_data: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
      },
      required: ['user_id'],
    },
    handler: async ({ params, user, realm, meta }) => {
      const target = await accessUserById(ctx.db, realm, user, params.user_id, { forAdmin: true, allowBots: true, allowDeactivated: true });
      // An administrator's blank name is no change at all, as on the real server (a user's own is 'Name too short!').
      const fullName = params.full_name !== undefined && params.full_name.trim() !== '' && params.full_name !== target.full_name ? params.full_name : undefined;
      if (fullName !== undefined) await checkNameUnique(ctx.db, realm, validateFullName(fullName), target.id);
      // One append: a bad field leaves the name and role as they were.
      await changeUserAtOnce(ctx, meta, target.id, (state, owners) => [
        ...(params.role !== undefined && params.role !== state.role ? [{ type: 'ChangeRole' as const, actor: actorOf(user), role: params.role, active_owner_count: owners }] : []),
        ...(fullName !== undefined ? [{ type: 'RenameUser' as const, actor: actorOf(user), full_name: fullName }] : []),
      ], (row) => profileDataEvents(ctx, meta, row, params.profile_data ?? [], 'admin'));
    },
  });

  defineRoute<{ user_id: number; deactivation_notification_comment?: string }>(app, {
    method: 'DELETE',
    url: '/users/:user_id',
    params: {
      properties: { user_id: { type: 'integer' }, deactivation_notification_comment: { type: 'string', maxLength: 2000 } },
      required: ['user_id'],
    },
    handler: async ({ request, params, user, realm, meta }) => {
      const target = await accessUserById(ctx.db, realm, user, params.user_id, { forAdmin: true });
      await deactivateUser(ctx, meta, target.id, actorOf(user));
      // Any comment, even an empty one, asks for the notice to be mailed; without one nothing is sent.
      const comment = params.deactivation_notification_comment?.trim();
      if (comment !== undefined) {
        await mailerFor(ctx.config, request.log).send({
          to: target.delivery_email,
          subject: `Notification of account deactivation on ${realm.name}`,
          text: [`Your Zulip account on ${realm.url} has been deactivated, and you will no longer be able to log in.`, ...(comment ? ['', comment] : [])].join('\n'),
        });
      }
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/users/me',
    handler: async ({ user, meta }) => {
      await deactivateUser(ctx, meta, user.id, actorOf(user), true);
    },
  });

  defineRoute<{ user_id: number }>(app, {
    method: 'POST',
    url: '/users/:user_id/reactivate',
    params: { properties: { user_id: { type: 'integer' } }, required: ['user_id'] },
    handler: async ({ params, user, realm, meta }) => {
      const target = await accessUserById(ctx.db, realm, user, params.user_id, { forAdmin: true, allowBots: true, allowDeactivated: true });
      await reactivateUser(ctx, meta, target.id, actorOf(user));
    },
  });

  defineRoute<{ data: Array<{ id: number; value: unknown }> }>(app, {
    method: 'PATCH',
    url: '/users/me/profile_data',
    params: {
      properties: { data: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id', 'value'] } } },
      required: ['data'],
    },
    handler: async ({ params, user, meta }) => {
      // The real server's update_user_custom_profile_data is @human_users_only.
      if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      await setProfileData(ctx, meta, user.id, params.data);
    },
  });

  defineRoute<{ name: string; hint?: string; field_type: number; field_data?: unknown; display_in_profile_summary?: boolean; required?: boolean }>(app, {
    method: 'POST',
    url: '/realm/profile_fields',
    params: {
      properties: {
        name: { type: 'string' },
        hint: { type: 'string' },
        field_type: { type: 'integer' },
        field_data: { type: 'object' },
        display_in_profile_summary: { type: 'boolean' },
        required: { type: 'boolean' },
      },
      required: ['field_type'],
    },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      const id = await createProfileField(ctx, meta, params);
      return { id };
    },
  });

  defineRoute<{ order: number[] }>(app, {
    method: 'PATCH',
    url: '/realm/profile_fields',
    params: { properties: { order: { type: 'array', items: { type: 'integer' } } }, required: ['order'] },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      await reorderProfileFields(ctx, meta, params.order);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/realm/profile_fields',
    handler: async ({ realm }) => {
      return { custom_fields: await listProfileFields(ctx.db, realm.id) };
    },
  });
}
