import { registerApplier } from './registry.js';

registerApplier('realm_user', (state, event, ctx) => {
  const person = event.person;
  if (event.op === 'add') {
    const { is_active: _active, ...rest } = person;
    if (state.realm_users) state.realm_users.push(rest);
    return;
  }
  if (event.op !== 'update') throw new Error(`realm_user op ${event.op}`);
  const lists: any[][] = [state.realm_users ?? [], state.realm_non_active_users ?? []];
  for (const list of lists) {
    const user = list.find((u) => u.user_id === person.user_id);
    if (!user) continue;
    for (const [key, value] of Object.entries(person)) {
      if (key === 'user_id' || key === 'is_active') continue;
      // realm_users entries carry avatar_url only; the other avatar fields are for the user's own state.
      if ((key === 'avatar_source' || key === 'avatar_url_medium') && !(key in user)) continue;
      if (key === 'new_email') user.email = value;
      else if (key === 'custom_profile_field') {
        const field = value as { id: number; value: string | null; rendered_value?: string };
        user.profile_data ??= {};
        if (field.value === null) delete user.profile_data[field.id];
        else user.profile_data[field.id] = field.rendered_value === undefined ? { value: field.value } : { value: field.value, rendered_value: field.rendered_value };
      } else user[key] = value;
    }
    if (person.role !== undefined) {
      user.is_owner = person.role === 100;
      user.is_admin = person.role <= 200;
      user.is_guest = person.role === 600;
    }
  }
  if ('is_active' in person && state.realm_users) {
    const from = person.is_active ? state.realm_non_active_users : state.realm_users;
    const to = person.is_active ? state.realm_users : state.realm_non_active_users;
    const index = from.findIndex((u: any) => u.user_id === person.user_id);
    if (index >= 0) to.push(...from.splice(index, 1));
  }
  if (person.user_id === ctx.userId) {
    if (person.full_name !== undefined) state.full_name = person.full_name;
    if (person.delivery_email !== undefined && 'delivery_email' in state) state.delivery_email = person.delivery_email;
    if (person.new_email !== undefined && 'email' in state) state.email = person.new_email;
    if (person.role !== undefined) {
      state.role = person.role;
      state.is_owner = person.role === 100;
      state.is_admin = person.role <= 200;
      state.is_moderator = person.role === 300;
      state.is_guest = person.role === 600;
    }
  }
});

registerApplier('realm_bot', (state, event) => {
  if (state.realm_bots) state.realm_bots.push(event.bot);
});

registerApplier('realm', (state, event) => {
  if (event.op !== 'update_dict') throw new Error(`realm op ${event.op}`);
  for (const [key, value] of Object.entries(event.data as Record<string, unknown>)) {
    if (`realm_${key}` in state) state[`realm_${key}`] = value;
  }
});
