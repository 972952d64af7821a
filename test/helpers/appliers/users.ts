import { registerApplier, type State } from './registry.js';

/** Takes a user out of every subscriber list and group the state holds (they left them all). */
function forget(state: State, userId: number): void {
  for (const list of ['subscriptions', 'unsubscribed', 'never_subscribed']) {
    for (const sub of state[list] ?? []) if (Array.isArray(sub.subscribers)) sub.subscribers = sub.subscribers.filter((id: number) => id !== userId);
  }
  for (const group of state.realm_user_groups ?? []) group.members = group.members.filter((id: number) => id !== userId);
}

registerApplier('realm_user', (state, event, ctx) => {
  const person = event.person;
  if (event.op === 'add') {
    // Keyed by id, as the real apply_event's raw_users: the whole user replaces a placeholder.
    const { is_active: _active, ...rest } = person;
    for (const list of ['realm_users', 'realm_non_active_users']) {
      if (state[list]) state[list] = state[list].filter((u: any) => u.user_id !== person.user_id);
    }
    if (state.realm_users) state.realm_users.push(rest);
    return;
  }
  if (event.op === 'remove') {
    // The user is no longer accessible (limited user access): an "Unknown user" placeholder takes
    // their place, or nothing with user_list_incomplete; they leave the subscriber lists.
    for (const list of ['realm_users', 'realm_non_active_users']) {
      if (state[list]) state[list] = state[list].filter((u: any) => u.user_id !== person.user_id);
    }
    if (state.realm_users && !ctx.userListIncomplete) state.realm_users.push(placeholder(person.user_id, ctx.realmHost ?? ''));
    for (const list of ['subscriptions', 'unsubscribed', 'never_subscribed']) {
      for (const sub of state[list] ?? []) if (Array.isArray(sub.subscribers)) sub.subscribers = sub.subscribers.filter((id: number) => id !== person.user_id);
    }
    return;
  }
  if (event.op !== 'update') throw new Error(`realm_user op ${event.op}`);
  // A deactivated account leaves every group and subscriber list (the real server's apply_event).
  if (person.is_active === false) forget(state, person.user_id);
  const selfBefore = (state.realm_users ?? []).find((u: any) => u.user_id === ctx.userId);
  const wasAdmin = state.is_admin ?? selfBefore?.is_admin;
  const wasGuest = state.is_guest ?? selfBefore?.is_guest;
  const lists: any[][] = [state.realm_users ?? [], state.realm_non_active_users ?? []];
  for (const list of lists) {
    const user = list.find((u) => u.user_id === person.user_id);
    if (!user) continue;
    for (const [key, value] of Object.entries(person)) {
      if (key === 'user_id' || key === 'is_active') continue;
      // Avatar events carry full URLs; a client_gravatar client computes Gravatar URLs itself for
      // users whose real address it can see (the real server's apply_event does the same).
      if (key === 'avatar_url' && ctx.clientGravatar && person.avatar_source === 'G' && user.delivery_email !== null) {
        user.avatar_url = null;
        continue;
      }
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
    for (const key of ['avatar_source', 'avatar_url', 'avatar_url_medium']) {
      if (person[key] !== undefined && key in state) state[key] = person[key];
    }
    if (person.delivery_email !== undefined && 'delivery_email' in state) state.delivery_email = person.delivery_email;
    if (person.new_email !== undefined && 'email' in state) state.email = person.new_email;
    if (person.role !== undefined) {
      // /register has no top-level role at any documented level; the is_* flags carry it.
      state.is_owner = person.role === 100;
      state.is_admin = person.role <= 200;
      state.is_moderator = person.role === 300;
      state.is_guest = person.role === 600;
      recomputePermissions(state, ctx.userId);
    }
  }
  if (person.user_id === ctx.userId && person.role !== undefined) {
    // No event carries these: the real server's apply_event reads them again when the client's own
    // role moves it into or out of administering every bot, or out of or into being a guest.
    const nowAdmin = person.role <= 200;
    const nowGuest = person.role === 600;
    if ('realm_bots' in state && wasAdmin !== undefined && wasAdmin !== nowAdmin) state.realm_bots = structuredClone(ctx.server?.realm_bots);
    if ('realm_default_streams' in state && wasGuest !== undefined && wasGuest !== nowGuest) {
      state.realm_default_streams = nowGuest ? [] : structuredClone(ctx.server?.realm_default_streams);
    }
  }
});

/** The real server's placeholder for a user one may not access (without is_active, as in realm_users). */
function placeholder(userId: number, realmHost: string): Record<string, unknown> {
  return {
    email: `user${userId}@${realmHost}`,
    user_id: userId,
    avatar_version: 1,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_billing_admin: false,
    role: 400,
    is_bot: false,
    full_name: 'Unknown user',
    timezone: '',
    date_joined: '1970-01-01T00:00:00+00:00',
    delivery_email: null,
    avatar_url: '/static/images/unknown-user-avatar.png',
    profile_data: {},
  };
}

registerApplier('realm_bot', (state, event) => {
  if (!state.realm_bots) return;
  const index = state.realm_bots.findIndex((b: any) => b.user_id === event.bot.user_id);
  switch (event.op) {
    case 'add': state.realm_bots.push(event.bot); return;
    case 'update': if (index >= 0) Object.assign(state.realm_bots[index], event.bot); return;
    case 'delete': if (index >= 0) state.realm_bots.splice(index, 1); return;
    default: throw new Error(`realm_bot op ${event.op}`);
  }
});

registerApplier('realm', (state, event, ctx) => {
  // The organization's deactivation only flushes long-polls: no registration can follow it.
  if (event.op === 'deactivated') return;
  // The documented client rule: a realm/update event is the update_dict of its one property.
  if (event.op !== 'update_dict' && event.op !== 'update') throw new Error(`realm op ${event.op}`);
  const data = (event.op === 'update' ? { [event.property]: event.value } : event.data) as Record<string, unknown>;
  for (const [key, value] of Object.entries(data)) {
    if (`realm_${key}` in state) state[`realm_${key}`] = value;
  }
  // The effective Jitsi server follows the organization's own (null: the server's).
  if ('jitsi_server_url' in data && 'jitsi_server_url' in state) state.jitsi_server_url = data.jitsi_server_url ?? state.server_jitsi_server_url;
  recomputePermissions(state, ctx.userId);
});

/**
 * The real client's rule (and the real server's apply_event): the can_* fields carry no events of
 * their own; they follow from the realm policies and the user's role, so a client recomputes them
 * when either changes. Needs the realm section to know the policies.
 */
function recomputePermissions(state: Record<string, any>, userId: number): void {
  if (!('can_create_streams' in state) || !('realm_create_public_stream_policy' in state)) return;
  // The client's own role, from the is_* flags (/register has no top-level role).
  const role = state.is_owner ? 100 : state.is_admin ? 200 : state.is_moderator ? 300 : state.is_guest ? 600 : 400;
  const self = (state.realm_users ?? []).find((u: any) => u.user_id === userId);
  const ageDays = self ? (Date.now() - Date.parse(self.date_joined)) / 86_400_000 : Infinity;
  const fullMember = role <= 400 && ageDays >= Number(state.realm_waiting_period_threshold ?? 0);
  // Permission levels: 1 members, 2 admins, 3 full members, 4 moderators, 6 nobody, 7 owners.
  const may = (policy: number) => {
    if (role === 600) return false;
    switch (policy) {
      case 1: return true;
      case 2: return role <= 200;
      case 3: return role <= 300 || fullMember;
      case 4: return role <= 300;
      case 7: return role === 100;
      default: return false;
    }
  };
  state.can_create_public_streams = may(state.realm_create_public_stream_policy);
  state.can_create_private_streams = may(state.realm_create_private_stream_policy);
  state.can_create_web_public_streams = state.server_web_public_streams_enabled === true
    && state.realm_enable_spectator_access === true && may(state.realm_create_web_public_stream_policy);
  state.can_create_streams = state.can_create_public_streams || state.can_create_private_streams || state.can_create_web_public_streams;
  state.can_subscribe_other_users = may(state.realm_invite_to_stream_policy);
  state.can_invite_others_to_realm = may(state.realm_invite_to_realm_policy);
}
