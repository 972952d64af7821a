import { errors } from '../errors.js';
import type { DefaultStreamGroupChanged, DefaultStreamGroupCreated, DefaultStreamGroupRemoved, RealmAdminEvent } from './events.js';

export interface DefaultStreamGroup {
  id: number;
  name: string;
  description: string;
  stream_ids: number[];
}

/** A channel the administrator named, resolved by the service. */
export interface NamedChannel {
  id: number;
  name: string;
  is_default: boolean;
}

export type DefaultStreamGroupCommand =
  | { type: 'CreateDefaultStreamGroup'; group_id: number; name: string; description: string; channels: NamedChannel[] }
  | { type: 'UpdateDefaultStreamGroupInfo'; group_id: number; new_group_name?: string; new_description?: string }
  | { type: 'UpdateDefaultStreamGroupStreams'; group_id: number; op: string; channels: NamedChannel[] }
  | { type: 'RemoveDefaultStreamGroup'; group_id: number };

type GroupEvent = DefaultStreamGroupCreated | DefaultStreamGroupChanged | DefaultStreamGroupRemoved;

const MAX_NAME_LENGTH = 60;

function checkName(name: string): void {
  if (name.trim() === '') throw errors.badRequest(`Invalid default channel group name '${name}'`);
  if (name.length > MAX_NAME_LENGTH) throw errors.badRequest(`Default channel group name too long (limit: ${MAX_NAME_LENGTH} characters)`);
}

function checkNotDefault(channels: readonly NamedChannel[], groupName: string): void {
  const single = channels.find((c) => c.is_default);
  if (single) throw errors.badRequest(`'${single.name}' is a default channel and cannot be added to '${groupName}'`);
}

export const defaultStreamGroupNotFound = (groupId: number) => errors.badRequest(`Default channel group with id '${groupId}' does not exist.`);

/** Pure: the default channel group commands, over every group of the realm. */
export function decideDefaultStreamGroups(command: DefaultStreamGroupCommand, realmId: number, groups: readonly DefaultStreamGroup[]): GroupEvent[] {
  if (command.type === 'CreateDefaultStreamGroup') {
    checkNotDefault(command.channels, command.name);
    checkName(command.name);
    if (groups.some((g) => g.name === command.name)) throw errors.badRequest(`Default channel group '${command.name}' already exists`);
    const stream_ids = [...new Set(command.channels.map((c) => c.id))];
    return [{ type: 'DefaultStreamGroupCreated', data: { realm_id: realmId, group_id: command.group_id, name: command.name, description: command.description, stream_ids } }];
  }
  // Checked before the group is looked up, as the real server does.
  if (command.type === 'UpdateDefaultStreamGroupInfo' && !command.new_group_name && !command.new_description) {
    throw errors.badRequest('You must pass "new_description" or "new_group_name".');
  }
  const group = groups.find((g) => g.id === command.group_id);
  if (!group) throw defaultStreamGroupNotFound(command.group_id);
  const changed = (next: Partial<DefaultStreamGroup>): GroupEvent => ({
    type: 'DefaultStreamGroupChanged',
    data: { realm_id: realmId, group_id: group.id, name: group.name, description: group.description, stream_ids: group.stream_ids, ...next },
  });
  switch (command.type) {
    case 'UpdateDefaultStreamGroupInfo': {
      // The name and the description are changed one after the other, each with its own event.
      const events: GroupEvent[] = [];
      let name = group.name;
      if (command.new_group_name !== undefined) {
        if (group.name === command.new_group_name) throw errors.badRequest(`This default channel group is already named '${command.new_group_name}'`);
        if (groups.some((g) => g.name === command.new_group_name)) throw errors.badRequest(`Default channel group '${command.new_group_name}' already exists`);
        checkName(command.new_group_name);
        name = command.new_group_name;
        events.push(changed({ name }));
      }
      if (command.new_description !== undefined) events.push(changed({ name, description: command.new_description }));
      return events;
    }
    case 'UpdateDefaultStreamGroupStreams': {
      const ids = new Set(group.stream_ids);
      if (command.op === 'add') {
        checkNotDefault(command.channels, group.name);
        for (const c of command.channels) {
          if (ids.has(c.id)) throw errors.badRequest(`Channel '${c.name}' is already present in default channel group '${group.name}'`);
          ids.add(c.id);
        }
      } else if (command.op === 'remove') {
        for (const c of command.channels) {
          if (!ids.has(c.id)) throw errors.badRequest(`Channel '${c.name}' is not present in default channel group '${group.name}'`);
          ids.delete(c.id);
        }
      } else {
        throw errors.badRequest('Invalid value for "op". Specify one of "add" or "remove".');
      }
      return [changed({ stream_ids: [...ids] })];
    }
    case 'RemoveDefaultStreamGroup':
      return [{ type: 'DefaultStreamGroupRemoved', data: { realm_id: realmId, group_id: group.id } }];
  }
}

/** Folds one event of the realm's default-stream-groups stream. */
export function evolveDefaultStreamGroups(groups: DefaultStreamGroup[], event: RealmAdminEvent): DefaultStreamGroup[] {
  switch (event.type) {
    case 'DefaultStreamGroupCreated':
    case 'DefaultStreamGroupChanged': {
      const { group_id: id, name, description, stream_ids } = event.data;
      return [...groups.filter((g) => g.id !== id), { id, name, description, stream_ids: [...stream_ids] }];
    }
    case 'DefaultStreamGroupRemoved':
      return groups.filter((g) => g.id !== event.data.group_id);
    default:
      return groups;
  }
}
