import { registerApplier } from './registry.js';

// presence events carry the legacy per-client dictionary; a slim queue's events have no email.
registerApplier('presence', (state, event) => {
  if (!('presences' in state)) return;
  const website = event.presence.website;
  if ('email' in event) {
    const { pushable: _, ...aggregated } = website;
    state.presences[event.email] = { website, aggregated };
    return;
  }
  const key = String(event.user_id);
  const entry = state.presences[key] ?? {};
  // An "active" event means active and connected at that moment; an "idle" one moves only the connection.
  if (website.status === 'active') entry.active_timestamp = website.timestamp;
  entry.idle_timestamp = website.timestamp;
  state.presences[key] = entry;
});

// As the real server's apply_event: only the named fields change; "" clears; an empty entry goes.
registerApplier('user_status', (state, event) => {
  if (!('user_status' in state)) return;
  const key = String(event.user_id);
  const entry = (state.user_status[key] ??= {});
  if (event.away !== undefined) {
    if (event.away) entry.away = true;
    else delete entry.away;
  }
  if (event.status_text !== undefined) {
    if (event.status_text === '') delete entry.status_text;
    else entry.status_text = event.status_text;
  }
  if (event.emoji_name !== undefined) {
    if (event.emoji_name === '') {
      delete entry.emoji_name;
      delete entry.emoji_code;
      delete entry.reaction_type;
    } else Object.assign(entry, { emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type });
  }
  if (Object.keys(entry).length === 0) delete state.user_status[key];
});
