import type { Event } from '../event-types.js';

/**
 * What other users see of someone's presence changed: they came online (first ping, or active again
 * after more than ACTIVITY_OFFSET_SECS without activity), went idle, or came back idle after being
 * offline. The pings in between are not logged (see presence_last_seen and docs/DECISIONS.md).
 * Times are UNIX seconds; `last_active_time` is null for a user never seen active.
 */
export type PresenceChanged = Event<'PresenceChanged', {
  user_id: number;
  realm_id: number;
  status: 'active' | 'idle';
  last_active_time: number | null;
  last_connected_time: number;
}>;

export type PresenceEvent = PresenceChanged;
