import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { Role } from '../../domain/roles.js';
import { invalidUserGroup } from '../../domain/user-groups/decider.js';
import { actorOf as channelActorOf } from '../../services/channels.js';
import type { UserRow } from '../../read/users.js';
import { listUserGroups, recursiveMembers, recursiveSubgroups, loadGroups } from '../../read/user-groups.js';
import { changeUserGroups, createUserGroup } from '../../services/user-groups.js';
import { noticeGroupMembershipChanges } from '../../services/user-group-notices.js';
import type { AppServices } from '../services.js';

const ids = { type: 'array', items: { type: 'integer' } } as const;

export default async function userGroupRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const actorOf = (user: UserRow, realm: Parameters<typeof channelActorOf>[1], now: Date) => channelActorOf(user, realm, now);
  // Every user-group endpoint, reads included, is for members and administrators: not guests, not bots.
  const memberOrAdmin = (user: UserRow) => {
    if (user.role === Role.GUEST) throw errors.badRequest('Not allowed for guest users');
    if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
  };
  const requireGroup = async (realmId: number, groupId: number) => {
    const group = (await loadGroups(ctx.db, realmId)).find((g) => g.id === groupId);
    if (!group) throw invalidUserGroup();
    return group;
  };

  defineRoute(app, {
    method: 'GET',
    url: '/user_groups',
    allow: memberOrAdmin,
    handler: async ({ realm }) => ({ user_groups: await listUserGroups(ctx.db, realm.id) }),
  });

  defineRoute<{ name: string; description: string; members?: number[]; subgroups?: number[]; can_mention_group?: number }>(app, {
    method: 'POST',
    url: '/user_groups/create',
    allow: memberOrAdmin,
    params: {
      properties: { name: { type: 'string' }, description: { type: 'string' }, members: ids, subgroups: ids, can_mention_group: { type: 'integer' } },
      required: ['name', 'description'],
    },
    handler: async ({ params, user, realm, meta }) => ({
      group_id: await createUserGroup(ctx, meta, realm, {
        actor: actorOf(user, realm, meta.now), name: params.name, description: params.description, members: params.members ?? [],
        subgroups: params.subgroups ?? [], can_mention_group: params.can_mention_group,
      }),
    }),
  });

  defineRoute<{ user_group_id: number; name?: string; description?: string; can_mention_group?: number }>(app, {
    method: 'PATCH',
    url: '/user_groups/:user_group_id',
    allow: memberOrAdmin,
    params: {
      properties: { user_group_id: { type: 'integer' }, name: { type: 'string' }, description: { type: 'string' }, can_mention_group: { type: 'integer' } },
      required: ['user_group_id'],
    },
    handler: async ({ params, user, realm, meta }) => {
      await changeUserGroups(ctx, meta, realm, {
        type: 'UpdateUserGroup', actor: actorOf(user, realm, meta.now), group_id: params.user_group_id,
        name: params.name, description: params.description, can_mention_group: params.can_mention_group,
      });
    },
  });

  defineRoute<{ user_group_id: number }>(app, {
    method: 'DELETE',
    url: '/user_groups/:user_group_id',
    allow: memberOrAdmin,
    params: { properties: { user_group_id: { type: 'integer' } }, required: ['user_group_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await changeUserGroups(ctx, meta, realm, { type: 'DeleteUserGroup', actor: actorOf(user, realm, meta.now), group_id: params.user_group_id });
    },
  });

  defineRoute<{ user_group_id: number; add?: number[]; delete?: number[] }>(app, {
    method: 'POST',
    url: '/user_groups/:user_group_id/members',
    allow: memberOrAdmin,
    params: { properties: { user_group_id: { type: 'integer' }, add: ids, delete: ids }, required: ['user_group_id'] },
    handler: async ({ params, user, realm, meta }) => {
      const add = params.add ?? [];
      const remove = params.delete ?? [];
      await changeUserGroups(ctx, meta, realm, { type: 'UpdateMembers', actor: actorOf(user, realm, meta.now), group_id: params.user_group_id, add, delete: remove });
      const group = await requireGroup(realm.id, params.user_group_id);
      await noticeGroupMembershipChanges(ctx, meta, user, realm, group.name, { added: add, removed: remove });
    },
  });

  defineRoute<{ user_group_id: number; add?: number[]; delete?: number[] }>(app, {
    method: 'POST',
    url: '/user_groups/:user_group_id/subgroups',
    allow: memberOrAdmin,
    params: { properties: { user_group_id: { type: 'integer' }, add: ids, delete: ids }, required: ['user_group_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await changeUserGroups(ctx, meta, realm, { type: 'UpdateSubgroups', actor: actorOf(user, realm, meta.now), group_id: params.user_group_id, add: params.add ?? [], delete: params.delete ?? [] });
    },
  });

  defineRoute<{ user_group_id: number; direct_member_only?: boolean }>(app, {
    method: 'GET',
    url: '/user_groups/:user_group_id/members',
    allow: memberOrAdmin,
    params: { properties: { user_group_id: { type: 'integer' }, direct_member_only: { type: 'boolean' } }, required: ['user_group_id'] },
    handler: async ({ params, realm }) => {
      const group = await requireGroup(realm.id, params.user_group_id);
      return { members: params.direct_member_only ? group.members : await recursiveMembers(ctx.db, group.id) };
    },
  });

  defineRoute<{ user_group_id: number; direct_subgroup_only?: boolean }>(app, {
    method: 'GET',
    url: '/user_groups/:user_group_id/subgroups',
    allow: memberOrAdmin,
    params: { properties: { user_group_id: { type: 'integer' }, direct_subgroup_only: { type: 'boolean' } }, required: ['user_group_id'] },
    handler: async ({ params, realm }) => {
      const group = await requireGroup(realm.id, params.user_group_id);
      return { subgroups: params.direct_subgroup_only ? group.direct_subgroup_ids : await recursiveSubgroups(ctx.db, group.id) };
    },
  });

  defineRoute<{ user_group_id: number; user_id: number; direct_member_only?: boolean }>(app, {
    method: 'GET',
    url: '/user_groups/:user_group_id/members/:user_id',
    allow: memberOrAdmin,
    params: {
      properties: { user_group_id: { type: 'integer' }, user_id: { type: 'integer' }, direct_member_only: { type: 'boolean' } },
      required: ['user_group_id', 'user_id'],
    },
    handler: async ({ params, realm }) => {
      const group = await requireGroup(realm.id, params.user_group_id);
      // The target is looked up as any user lookup by id: bots are not users here, deactivated users are refused.
      const target = await ctx.db.selectFrom('users').select(['id', 'realm_id', 'is_bot', 'is_active']).where('id', '=', params.user_id).executeTakeFirst();
      if (!target || target.realm_id !== realm.id || target.is_bot) throw errors.noSuchUser();
      if (!target.is_active) throw errors.badRequest('User is deactivated');
      const members = params.direct_member_only ? group.members : await recursiveMembers(ctx.db, group.id);
      return { is_user_group_member: members.includes(params.user_id) };
    },
  });
}
