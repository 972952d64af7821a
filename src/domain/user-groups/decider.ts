import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import { hasPolicy } from '../channels/decider.js';
import { Role, isModeratorOrAbove } from '../roles.js';
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
  description?: string;
  /** The group whose members may mention this one. */
  can_mention_group?: number;
}

/** A realm's groups and who may be a member: enough to decide any group command. */
export interface UserGroupsState {
  realm_id: number;
  groups: readonly GroupState[];
  /** Active users of the realm (bots included). */
  active_user_ids: ReadonlySet<number>;
  /** The organization's user_group_edit_policy (who may create and change groups at all). */
  edit_policy: number;
}

export interface Actor {
  user_id: number;
  role: number;
  /** Past the organization's waiting period (for the full-members policy). */
  is_full_member: boolean;
}

export type UserGroupCommand =
  | {
    type: 'CreateUserGroup'; actor: Actor; group_id: number; name: string; description: string; members: readonly number[];
    subgroups: readonly number[]; can_mention_group?: number; now: number;
  }
  | { type: 'UpdateUserGroup'; actor: Actor; group_id: number; name?: string; description?: string; can_mention_group?: number }
  | { type: 'UpdateMembers'; actor: Actor; group_id: number; add: readonly number[]; delete: readonly number[] }
  | { type: 'UpdateSubgroups'; actor: Actor; group_id: number; add: readonly number[]; delete: readonly number[] }
  | { type: 'DeleteUserGroup'; actor: Actor; group_id: number };

export const invalidUserGroup = () => errors.badRequest('Invalid user group');
const insufficient = () => errors.badRequest('Insufficient permission');

/** A group name as the real server checks it: kept as typed (not trimmed), unique in the realm. */
export function validateGroupName(name: string, groups: readonly GroupState[], exceptId?: number): string {
  if (name.trim() === '') throw errors.badRequest("User group name can't be empty!");
  if (name.length > MAX_GROUP_NAME_LENGTH) throw errors.badRequest(`User group name cannot exceed ${MAX_GROUP_NAME_LENGTH} characters.`);
  const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (prefix) throw errors.badRequest(`User group name cannot start with '${prefix}'.`);
  if (groups.some((g) => g.name === name && g.id !== exceptId)) throw errors.badRequest(`User group '${name}' already exists.`);
  return name;
}

function validateDescription(description: string): string {
  if (description.length > MAX_GROUP_DESCRIPTION_LENGTH) {
    throw errors.badRequest(`User group description cannot exceed ${MAX_GROUP_DESCRIPTION_LENGTH} characters.`);
  }
  return description;
}

/** The value of can_mention_group: any group of the realm except role:internet and role:owners. */
function validateCanMentionGroup(groupId: number, groups: readonly GroupState[]): number {
  const group = groups.find((g) => g.id === groupId);
  if (!group) throw invalidUserGroup();
  for (const forbidden of ['role:internet', 'role:owners']) {
    if (group.is_system_group && group.name === forbidden) {
      throw errors.badRequest(`'can_mention_group' setting cannot be set to '${forbidden}' group.`);
    }
  }
  return group.id;
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

/** The organization's user_group_edit_policy gates every change to groups, creation included. */
function requireEditPolicy(actor: Actor, state: UserGroupsState): void {
  if (!hasPolicy(state.edit_policy, actor)) throw insufficient();
}

/** Who may change a group: nobody changes system groups (their membership follows roles); a
 * non-system group may be changed by moderators and administrators, and by its direct members. */
function requireMayEdit(actor: Actor, group: GroupState): void {
  if (group.is_system_group) throw insufficient();
  if (actor.role === Role.GUEST) throw insufficient();
  if (isModeratorOrAbove(actor.role) || group.members.includes(actor.user_id)) return;
  throw insufficient();
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

/** Groups whose can_mention_group setting names `groupId`. */
function mentionSettingUsers(groups: readonly GroupState[], groupId: number): GroupState[] {
  return groups.filter((g) => g.id !== groupId && g.can_mention_group === groupId);
}

type Out = Array<UserGroupEvent | UserGroupCreated>;
const ascending = (ids: number[]) => ids.sort((a, b) => a - b);

/** Pure: a command on a realm's user groups gives the events to record, or a catalog error. */
export function decideUserGroups(command: UserGroupCommand, state: UserGroupsState): Out {
  const realm_id = state.realm_id;
  const find = (id: number) => {
    const group = state.groups.find((g) => g.id === id);
    if (!group) throw invalidUserGroup();
    return group;
  };
  if (command.actor.role === Role.GUEST) throw insufficient();
  requireEditPolicy(command.actor, state);
  switch (command.type) {
    case 'CreateUserGroup': {
      const members = ascending(checkUsers(command.members, state));
      const name = validateGroupName(command.name, state.groups);
      const description = validateDescription(command.description);
      const can_mention_group = command.can_mention_group === undefined ? undefined : validateCanMentionGroup(command.can_mention_group, state.groups);
      const subgroups = ascending(checkGroups(command.subgroups, state));
      return [{
        type: 'UserGroupCreated',
        data: {
          group_id: command.group_id, realm_id, name, description, is_system_group: false, members, subgroups,
          creator_id: command.actor.user_id, date_created: command.now,
          ...(can_mention_group === undefined ? {} : { can_mention_group }),
        },
      }];
    }
    case 'UpdateUserGroup': {
      if (command.name === undefined && command.description === undefined && command.can_mention_group === undefined) {
        throw errors.badRequest('No new data supplied');
      }
      const group = find(command.group_id);
      requireMayEdit(command.actor, group);
      const changes: { name?: string; description?: string; can_mention_group?: number } = {};
      if (command.name !== undefined && command.name !== group.name) changes.name = validateGroupName(command.name, state.groups, group.id);
      if (command.description !== undefined && command.description !== group.description) changes.description = validateDescription(command.description);
      if (command.can_mention_group !== undefined && command.can_mention_group !== group.can_mention_group) {
        changes.can_mention_group = validateCanMentionGroup(command.can_mention_group, state.groups);
      }
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'UserGroupUpdated', data: { realm_id, group_id: group.id, changes } }];
    }
    case 'UpdateMembers': {
      if (command.add.length === 0 && command.delete.length === 0) throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      const events: Out = [];
      // Additions are checked and made before removals, as two steps of one request.
      if (command.add.length > 0) {
        const group = find(command.group_id);
        requireMayEdit(command.actor, group);
        const add = checkUsers(command.add, state);
        for (const id of add) if (group.members.includes(id)) throw errors.badRequest(`User ${id} is already a member of this group`);
        events.push({ type: 'UserGroupMembersAdded', data: { realm_id, group_id: group.id, user_ids: ascending(add) } });
      }
      if (command.delete.length > 0) {
        const remove = checkUsers(command.delete, state);
        const group = find(command.group_id);
        requireMayEdit(command.actor, group);
        const members = new Set([...group.members, ...command.add]);
        for (const id of remove) if (!members.has(id)) throw errors.badRequest(`There is no member '${id}' in this user group`);
        events.push({ type: 'UserGroupMembersRemoved', data: { realm_id, group_id: group.id, user_ids: ascending(remove) } });
      }
      return events;
    }
    case 'UpdateSubgroups': {
      if (command.add.length === 0 && command.delete.length === 0) throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      const group = find(command.group_id);
      requireMayEdit(command.actor, group);
      const events: Out = [];
      if (command.add.length > 0) {
        const add = checkGroups(command.add, state);
        for (const id of add) {
          if (group.direct_subgroup_ids.includes(id)) throw errors.badRequest(`User group ${id} is already a subgroup of this group.`);
        }
        // Adding makes a cycle when the group is reachable from one of the new subgroups (or is one of them).
        if (add.some((id) => descendants(state.groups, id).has(group.id))) {
          throw errors.badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
        }
        events.push({ type: 'UserGroupSubgroupsAdded', data: { realm_id, group_id: group.id, subgroup_ids: ascending(add) } });
      }
      if (command.delete.length > 0) {
        const remove = checkGroups(command.delete, state);
        const subgroups = new Set([...group.direct_subgroup_ids, ...command.add]);
        for (const id of remove) if (!subgroups.has(id)) throw errors.badRequest(`User group ${id} is not a subgroup of this group.`);
        events.push({ type: 'UserGroupSubgroupsRemoved', data: { realm_id, group_id: group.id, subgroup_ids: ascending(remove) } });
      }
      return events;
    }
    case 'DeleteUserGroup': {
      const group = find(command.group_id);
      requireMayEdit(command.actor, group);
      // Another group's mention setting names it: deleting it would leave that setting pointing nowhere.
      if (mentionSettingUsers(state.groups, group.id).length > 0) throw errors.badRequest('Cannot delete user group in use.');
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
