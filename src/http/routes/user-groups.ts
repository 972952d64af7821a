import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { invalidUserGroup } from '../../domain/user-groups/decider.js';
import { listUserGroups, recursiveMembers, recursiveSubgroups, loadGroups } from '../../read/user-groups.js';
import { changeUserGroups, createUserGroup } from '../../services/user-groups.js';
import type { AppServices } from '../services.js';

const ids = { type: 'array', items: { type: 'integer' } } as const;

export default async function userGroupRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const actorOf = (user: { id: number; role: number }) => ({ user_id: user.id, role: user.role });
  const requireGroup = async (realmId: number, groupId: number) => {
    const group = (await loadGroups(ctx.db, realmId)).find((g) => g.id === groupId);
    if (!group) throw invalidUserGroup();
    return group;
  };

  defineRoute(app, {
    method: 'GET',
    url: '/user_groups',
    handler: async ({ realm }) => ({ user_groups: await listUserGroups(ctx.db, realm.id) }),
  });

  defineRoute<{ name: string; description: string; members: number[]; subgroups?: number[] }>(app, {
    method: 'POST',
    url: '/user_groups/create',
    params: {
      properties: { name: { type: 'string' }, description: { type: 'string' }, members: ids, subgroups: ids },
      required: ['name', 'description', 'members'],
    },
    handler: async ({ params, user, meta }) => ({
      group_id: await createUserGroup(ctx, meta, {
        actor: actorOf(user), name: params.name, description: params.description, members: params.members, subgroups: params.subgroups ?? [],
      }),
    }),
  });

  defineRoute<{ user_group_id: number; name?: string; description?: string }>(app, {
    method: 'PATCH',
    url: '/user_groups/:user_group_id',
    params: { properties: { user_group_id: { type: 'integer' }, name: { type: 'string' }, description: { type: 'string' } }, required: ['user_group_id'] },
    handler: async ({ params, user, meta }) => {
      await changeUserGroups(ctx, meta, { type: 'UpdateUserGroup', actor: actorOf(user), group_id: params.user_group_id, name: params.name, description: params.description });
    },
  });

  defineRoute<{ user_group_id: number }>(app, {
    method: 'DELETE',
    url: '/user_groups/:user_group_id',
    params: { properties: { user_group_id: { type: 'integer' } }, required: ['user_group_id'] },
    handler: async ({ params, user, meta }) => {
      await changeUserGroups(ctx, meta, { type: 'DeleteUserGroup', actor: actorOf(user), group_id: params.user_group_id });
    },
  });

  defineRoute<{ user_group_id: number; add?: number[]; delete?: number[] }>(app, {
    method: 'POST',
    url: '/user_groups/:user_group_id/members',
    params: { properties: { user_group_id: { type: 'integer' }, add: ids, delete: ids }, required: ['user_group_id'] },
    handler: async ({ params, user, meta }) => {
      await changeUserGroups(ctx, meta, { type: 'UpdateMembers', actor: actorOf(user), group_id: params.user_group_id, add: params.add ?? [], delete: params.delete ?? [] });
    },
  });

  defineRoute<{ user_group_id: number; add?: number[]; delete?: number[] }>(app, {
    method: 'POST',
    url: '/user_groups/:user_group_id/subgroups',
    params: { properties: { user_group_id: { type: 'integer' }, add: ids, delete: ids }, required: ['user_group_id'] },
    handler: async ({ params, user, meta }) => {
      await changeUserGroups(ctx, meta, { type: 'UpdateSubgroups', actor: actorOf(user), group_id: params.user_group_id, add: params.add ?? [], delete: params.delete ?? [] });
    },
  });

  defineRoute<{ user_group_id: number; direct_member_only?: boolean }>(app, {
    method: 'GET',
    url: '/user_groups/:user_group_id/members',
    params: { properties: { user_group_id: { type: 'integer' }, direct_member_only: { type: 'boolean' } }, required: ['user_group_id'] },
    handler: async ({ params, realm }) => {
      const group = await requireGroup(realm.id, params.user_group_id);
      return { members: params.direct_member_only ? group.members : await recursiveMembers(ctx.db, group.id) };
    },
  });

  defineRoute<{ user_group_id: number; direct_subgroup_only?: boolean }>(app, {
    method: 'GET',
    url: '/user_groups/:user_group_id/subgroups',
    params: { properties: { user_group_id: { type: 'integer' }, direct_subgroup_only: { type: 'boolean' } }, required: ['user_group_id'] },
    handler: async ({ params, realm }) => {
      const group = await requireGroup(realm.id, params.user_group_id);
      return { subgroups: params.direct_subgroup_only ? group.direct_subgroup_ids : await recursiveSubgroups(ctx.db, group.id) };
    },
  });

  defineRoute<{ user_group_id: number; user_id: number; direct_member_only?: boolean }>(app, {
    method: 'GET',
    url: '/user_groups/:user_group_id/members/:user_id',
    params: {
      properties: { user_group_id: { type: 'integer' }, user_id: { type: 'integer' }, direct_member_only: { type: 'boolean' } },
      required: ['user_group_id', 'user_id'],
    },
    handler: async ({ params, realm }) => {
      const group = await requireGroup(realm.id, params.user_group_id);
      const target = await ctx.db.selectFrom('users').select(['id', 'realm_id']).where('id', '=', params.user_id).executeTakeFirst();
      if (!target || target.realm_id !== realm.id) throw errors.noSuchUser();
      const members = params.direct_member_only ? group.members : await recursiveMembers(ctx.db, group.id);
      return { is_user_group_member: members.includes(params.user_id) };
    },
  });
}
