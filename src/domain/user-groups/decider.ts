import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { Role, isAdminRole } from '../roles.js';
import type { UserGroupCreated } from '../realm/events.js';
import type { UserGroupEvent } from './events.js';

export const MAX_GROUP_NAME_LENGTH = 100;
export const MAX_GROUP_DESCRIPTION_LENGTH = 1024;
const RESERVED_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

export interface GroupState {
  id: number;
  name: string;
  is_system_group: boolean;
  members: readonly number[];
  direct_subgroup_ids: readonly number[];
}

/** A realm's groups and who may be a member: enough to decide any group command. */
export interface UserGroupsState {
  realm_id: number;
  groups: readonly GroupState[];
  /** Active users of the realm (bots included). */
  active_user_ids: ReadonlySet<number>;
}

export interface Actor {
  user_id: number;
  role: number;
}

export type UserGroupCommand =
  | { type: 'CreateUserGroup'; actor: Actor; group_id: number; name: string; description: string; members: readonly number[]; subgroups: readonly number[]; now: number }
  | { type: 'UpdateUserGroup'; actor: Actor; group_id: number; name?: string; description?: string }
  | { type: 'UpdateMembers'; actor: Actor; group_id: number; add: readonly number[]; delete: readonly number[] }
  | { type: 'UpdateSubgroups'; actor: Actor; group_id: number; add: readonly number[]; delete: readonly number[] }
  | { type: 'DeleteUserGroup'; actor: Actor; group_id: number };

export const invalidUserGroup = () => errors.badRequest('Invalid user group');
const insufficient = () => errors.badRequest('Insufficient permission');

export function validateGroupName(name: string, groups: readonly GroupState[], exceptId?: number): string {
  const trimmed = name.trim();
  if (trimmed === '') throw errors.badRequest('User group name cannot be empty.');
  if (trimmed.length > MAX_GROUP_NAME_LENGTH) throw errors.badRequest(`User group name cannot exceed ${MAX_GROUP_NAME_LENGTH} characters.`);
  const prefix = RESERVED_PREFIXES.find((p) => trimmed.startsWith(p));
  if (prefix) throw errors.badRequest(`User group name cannot start with '${prefix}'.`);
  if (groups.some((g) => g.name === trimmed && g.id !== exceptId)) throw errors.badRequest(`User group '${trimmed}' already exists.`);
  return trimmed;
}

function validateDescription(description: string): string {
  if (description.length > MAX_GROUP_DESCRIPTION_LENGTH) {
    throw errors.badRequest(`User group description cannot exceed ${MAX_GROUP_DESCRIPTION_LENGTH} characters.`);
  }
  return description;
}

/** All groups reachable from `start` through subgroup links (including start). */
export function descendants(groups: readonly GroupState[], start: number): Set<number> {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const seen = new Set<number>([start]);
  const queue = [start];
  while (queue.length > 0) {
    for (const sub of byId.get(queue.pop()!)?.direct_subgroup_ids ?? []) {
      if (!seen.has(sub)) {
        seen.add(sub);
        queue.push(sub);
      }
    }
  }
  return seen;
}

/** Members directly or through subgroups. */
export function effectiveMembers(groups: readonly GroupState[], groupId: number): Set<number> {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const members = new Set<number>();
  for (const id of descendants(groups, groupId)) for (const user of byId.get(id)?.members ?? []) members.add(user);
  return members;
}

/** Who may change a group: nobody changes system groups (their membership follows roles); a
 * non-system group may be changed by administrators and by its members. */
function requireMayEdit(actor: Actor, group: GroupState, groups: readonly GroupState[]): void {
  if (group.is_system_group) throw insufficient();
  if (isAdminRole(actor.role)) return;
  if (actor.role === Role.GUEST || !effectiveMembers(groups, group.id).has(actor.user_id)) throw insufficient();
}

function checkUsers(ids: readonly number[], state: UserGroupsState): number[] {
  const unique = [...new Set(ids)];
  for (const id of unique) if (!state.active_user_ids.has(id)) throw errors.badRequest(`Invalid user ID: ${id}`);
  return unique;
}

function checkGroups(ids: readonly number[], state: UserGroupsState): number[] {
  const unique = [...new Set(ids)];
  for (const id of unique) if (!state.groups.some((g) => g.id === id)) throw errors.badRequest(`Invalid user group ID: ${id}`);
  return unique;
}

type Out = Array<UserGroupEvent | UserGroupCreated>;

/** Pure: a command on a realm's user groups gives the events to record, or a catalog error. */
export function decideUserGroups(command: UserGroupCommand, state: UserGroupsState): Out {
  const realm_id = state.realm_id;
  const find = (id: number) => {
    const group = state.groups.find((g) => g.id === id);
    if (!group) throw invalidUserGroup();
    return group;
  };
  switch (command.type) {
    case 'CreateUserGroup': {
      if (command.actor.role === Role.GUEST) throw insufficient();
      const name = validateGroupName(command.name, state.groups);
      const description = validateDescription(command.description);
      const members = checkUsers(command.members, state).sort((a, b) => a - b);
      const subgroups = checkGroups(command.subgroups, state).sort((a, b) => a - b);
      return [{
        type: 'UserGroupCreated',
        data: {
          group_id: command.group_id, realm_id, name, description, is_system_group: false, members, subgroups,
          creator_id: command.actor.user_id, date_created: command.now,
        },
      }];
    }
    case 'UpdateUserGroup': {
      const group = find(command.group_id);
      requireMayEdit(command.actor, group, state.groups);
      if (command.name === undefined && command.description === undefined) throw errors.badRequest('No new data supplied');
      const changes: { name?: string; description?: string } = {};
      if (command.name !== undefined) {
        const name = validateGroupName(command.name, state.groups, group.id);
        if (name !== group.name) changes.name = name;
      }
      if (command.description !== undefined) changes.description = validateDescription(command.description);
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'UserGroupUpdated', data: { realm_id, group_id: group.id, changes } }];
    }
    case 'UpdateMembers': {
      const group = find(command.group_id);
      requireMayEdit(command.actor, group, state.groups);
      if (command.add.length === 0 && command.delete.length === 0) throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      const add = checkUsers(command.add, state);
      const remove = [...new Set(command.delete)];
      for (const id of add) if (group.members.includes(id)) throw errors.badRequest(`User ${id} is already a member of this group`);
      for (const id of remove) if (!group.members.includes(id)) throw errors.badRequest(`There is no member '${id}' in this user group`);
      const events: Out = [];
      if (add.length > 0) events.push({ type: 'UserGroupMembersAdded', data: { realm_id, group_id: group.id, user_ids: add.sort((a, b) => a - b) } });
      if (remove.length > 0) events.push({ type: 'UserGroupMembersRemoved', data: { realm_id, group_id: group.id, user_ids: remove.sort((a, b) => a - b) } });
      return events;
    }
    case 'UpdateSubgroups': {
      const group = find(command.group_id);
      requireMayEdit(command.actor, group, state.groups);
      if (command.add.length === 0 && command.delete.length === 0) throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      const add = checkGroups(command.add, state);
      const remove = checkGroups(command.delete, state);
      for (const id of add) {
        if (group.direct_subgroup_ids.includes(id)) throw errors.badRequest(`User group ${id} is already a subgroup of this group.`);
        // Adding `id` under `group` makes a cycle when `group` is already reachable from `id`.
        if (descendants(state.groups, id).has(group.id)) {
          throw errors.badRequest(`User group ${id} contains this group; adding it as a subgroup would create a cycle.`);
        }
      }
      for (const id of remove) if (!group.direct_subgroup_ids.includes(id)) throw errors.badRequest(`User group ${id} is not a subgroup of this group.`);
      const events: Out = [];
      if (add.length > 0) events.push({ type: 'UserGroupSubgroupsAdded', data: { realm_id, group_id: group.id, subgroup_ids: add.sort((a, b) => a - b) } });
      if (remove.length > 0) events.push({ type: 'UserGroupSubgroupsRemoved', data: { realm_id, group_id: group.id, subgroup_ids: remove.sort((a, b) => a - b) } });
      return events;
    }
    case 'DeleteUserGroup': {
      const group = find(command.group_id);
      requireMayEdit(command.actor, group, state.groups);
      // Groups that contain it lose it as a subgroup first, so every client sees why.
      const parents = state.groups.filter((g) => g.direct_subgroup_ids.includes(group.id));
      return [
        ...parents.map((p): UserGroupEvent => ({ type: 'UserGroupSubgroupsRemoved', data: { realm_id, group_id: p.id, subgroup_ids: [group.id] } })),
        { type: 'UserGroupDeleted', data: { realm_id, group_id: group.id } },
      ];
    }
    default:
      return assertNever(command);
  }
}
