import { registerApplier } from './registry.js';

const sorted = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);

registerApplier('user_group', (state, event) => {
  const groups: any[] | undefined = state.realm_user_groups;
  if (!groups) return;
  const group = groups.find((g) => g.id === event.group_id);
  switch (event.op) {
    case 'add':
      groups.push(event.group);
      return;
    case 'update':
      Object.assign(group, event.data);
      return;
    case 'add_members':
      group.members = sorted([...group.members, ...event.user_ids]);
      return;
    case 'remove_members':
      group.members = group.members.filter((id: number) => !event.user_ids.includes(id));
      return;
    case 'add_subgroups':
      group.direct_subgroup_ids = sorted([...group.direct_subgroup_ids, ...event.direct_subgroup_ids]);
      return;
    case 'remove_subgroups':
      group.direct_subgroup_ids = group.direct_subgroup_ids.filter((id: number) => !event.direct_subgroup_ids.includes(id));
      return;
    case 'remove':
      state.realm_user_groups = groups.filter((g) => g.id !== event.group_id);
      return;
    default:
      throw new Error(`user_group op ${event.op}`);
  }
});
