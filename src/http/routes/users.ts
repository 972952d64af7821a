import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { ALL_ROLES, Role, isAdminRole } from '../../domain/roles.js';
import { realmHost } from '../../read/realm.js';
import { formatUser, getUserByEmail, getUserById, listUsers, type UserRow } from '../../read/users.js';
import { actorOf, changeUser, createUser } from '../../services/users.js';
import { createProfileField, setProfileData } from '../../services/profile-fields.js';
import type { AppServices } from '../services.js';

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

export default async function userRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
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
      return { members: users.map(formatFor(user, realmHost(realm), params)) };
    },
  });

  defineRoute<UserQuery>(app, {
    method: 'GET',
    url: '/users/me',
    params: { properties: { ...userQuery } },
    handler: async ({ params, user, realm }) => {
      const me = formatFor(user, realmHost(realm), params)(user);
      return { ...me, user_id: user.id, profile_data: user.profile_data, max_message_id: -1 };
    },
  });

  defineRoute<UserQuery & { user: string }>(app, {
    method: 'GET',
    url: '/users/:user',
    params: { properties: { ...userQuery, user: { type: 'string' } }, required: ['user'] },
    handler: async ({ params, user, realm }) => {
      const target = /^\d+$/.test(params.user)
        ? await getUserById(ctx.db, Number(params.user))
        : await getUserByEmail(ctx.db, realm.id, params.user, realmHost(realm));
      if (!target || target.realm_id !== realm.id) throw errors.noSuchUser();
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

  defineRoute<{ full_name: string; short_name?: string; bot_type?: number; service_name?: string; payload_url?: string; interface_type?: number; config_data?: unknown }>(app, {
    method: 'POST',
    url: '/bots',
    params: {
      properties: {
        full_name: { type: 'string' },
        short_name: { type: 'string' },
        bot_type: { type: 'integer', enum: [1, 2, 3, 4] },
        service_name: { type: 'string' },
        payload_url: { type: 'string' },
        interface_type: { type: 'integer' },
        config_data: { type: 'object' },
      },
      required: ['full_name', 'short_name'],
    },
    handler: async ({ params, user, realm, meta }) => {
      if (user.role === Role.GUEST) throw errors.badRequest('Not allowed for guest users');
      const short = params.short_name!.trim().toLowerCase();
      if (!/^[a-z0-9._-]+$/.test(short)) throw errors.badRequest('Bad name or username');
      const email = `${short}-bot@${realmHost(realm).split(':')[0]}`;
      const created = await createUser(ctx, meta, {
        email, full_name: params.full_name, role: Role.MEMBER, bot_type: params.bot_type ?? 1, bot_owner_id: user.id,
      });
      return { user_id: created.user_id, api_key: created.api_key };
    },
  });

  defineRoute<{ user_id: number; full_name?: string; role?: number; profile_data?: Array<{ id: number; value: unknown }> }>(app, {
    method: 'PATCH',
    url: '/users/:user_id',
    params: {
      properties: {
        user_id: { type: 'integer' },
        full_name: { type: 'string' },
        role: { type: 'integer' },
        profile_data: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
      },
      required: ['user_id'],
    },
    handler: async ({ params, user, meta }) => {
      const target = await getUserById(ctx.db, params.user_id);
      if (!target || target.realm_id !== user.realm_id) throw errors.noSuchUser();
      const isBotOwner = target.is_bot && target.bot_owner_id === user.id;
      if (!isAdminRole(user.role) && !isBotOwner) throw errors.mustBeAdmin();
      if (params.role !== undefined) {
        if (!ALL_ROLES.includes(params.role)) throw errors.badRequest('Invalid role');
        await changeUser(ctx, meta, target.id, (_s, owners) => ({ type: 'ChangeRole', actor: actorOf(user), role: params.role!, active_owner_count: owners }));
      }
      if (params.full_name !== undefined) {
        await changeUser(ctx, meta, target.id, () => ({ type: 'RenameUser', actor: actorOf(user), full_name: params.full_name! }));
      }
      if (params.profile_data) {
        for (const entry of params.profile_data) await setProfileData(ctx, meta, target.id, entry.id, entry.value);
      }
    },
  });

  defineRoute<{ user_id: number }>(app, {
    method: 'DELETE',
    url: '/users/:user_id',
    params: { properties: { user_id: { type: 'integer' } }, required: ['user_id'] },
    handler: async ({ params, user, meta }) => {
      await changeUser(ctx, meta, params.user_id, (_s, owners) => ({ type: 'DeactivateUser', actor: actorOf(user), active_owner_count: owners }));
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/users/me',
    handler: async ({ user, meta }) => {
      await changeUser(ctx, meta, user.id, (_s, owners) => ({ type: 'DeactivateUser', actor: { user_id: user.id, role: Role.OWNER }, active_owner_count: owners }));
    },
  });

  defineRoute<{ user_id: number }>(app, {
    method: 'POST',
    url: '/users/:user_id/reactivate',
    params: { properties: { user_id: { type: 'integer' } }, required: ['user_id'] },
    handler: async ({ params, user, meta }) => {
      await changeUser(ctx, meta, params.user_id, () => ({ type: 'ReactivateUser', actor: actorOf(user) }));
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
      for (const entry of params.data) await setProfileData(ctx, meta, user.id, entry.id, entry.value);
    },
  });

  defineRoute<{ name: string; hint?: string; field_type: number; field_data?: unknown; display_in_profile_summary?: boolean }>(app, {
    method: 'POST',
    url: '/realm/profile_fields',
    params: {
      properties: {
        name: { type: 'string', maxLength: 40 },
        hint: { type: 'string', maxLength: 80 },
        field_type: { type: 'integer', enum: [1, 2, 3, 4, 5, 6, 7, 8] },
        field_data: { type: 'object' },
        display_in_profile_summary: { type: 'boolean' },
      },
      required: ['field_type'],
    },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      const id = await createProfileField(ctx, meta, params);
      return { id };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/realm/profile_fields',
    handler: async ({ realm }) => {
      const fields = await ctx.db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realm.id).orderBy('order').execute();
      return { custom_fields: fields };
    },
  });
}
