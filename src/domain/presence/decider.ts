import { errors } from '../errors.js';
import { ACTIVITY_OFFSET_SECS, OFFLINE_THRESHOLD_SECS, PRESENCE_PING_INTERVAL_SECS, PRESENCE_UPDATE_MIN_FREQ_SECONDS } from './rules.js';

export type PresenceStatus = 'active' | 'idle';

/** A user's fine-grained last-seen times (UNIX seconds) and the status last logged for them. */
export interface LastSeen {
  last_active_time: number | null;
  last_connected_time: number;
  logged_status: PresenceStatus;
}

export interface PingOutcome {
  /** What the last-seen row becomes. */
  next: LastSeen;
  /** The row changed and must be written. */
  write: boolean;
  /** Others see a different presence: log a PresenceChanged with this status. */
  changed: PresenceStatus | null;
}

export function parseStatus(status: string): PresenceStatus {
  if (status === 'active' || status === 'idle') return status;
  throw errors.badRequest(`Invalid status: ${status}`);
}

/** Coming back active after this long (with the default settings 70 s) is "newly online" (the real server's rule). */
const NEWLY_ONLINE_SECS = OFFLINE_THRESHOLD_SECS - PRESENCE_PING_INTERVAL_SECS - 10;

/**
 * Pure: one ping against the stored times. Times move as on the real server (not more often than
 * every PRESENCE_UPDATE_MIN_FREQ_SECONDS); a change is logged only when what others see changes.
 */
export function decidePing(prev: LastSeen | undefined, status: PresenceStatus, now: number): PingOutcome {
  if (!prev) {
    const next = { last_active_time: status === 'active' ? now : null, last_connected_time: now, logged_status: status };
    return { next, write: true, changed: status };
  }
  const sinceActive = prev.last_active_time === null ? Infinity : now - prev.last_active_time;
  const sinceConnected = now - prev.last_connected_time;
  const next: LastSeen = { ...prev };
  if (sinceConnected > PRESENCE_UPDATE_MIN_FREQ_SECONDS) next.last_connected_time = now;
  if (status === 'active' && sinceActive > PRESENCE_UPDATE_MIN_FREQ_SECONDS) {
    next.last_active_time = now;
    if (now > next.last_connected_time) next.last_connected_time = now;
  }
  let changed: PresenceStatus | null = null;
  if (status === 'active' && sinceActive > NEWLY_ONLINE_SECS) changed = 'active';
  else if (status === 'idle' && sinceActive > ACTIVITY_OFFSET_SECS && (prev.logged_status === 'active' || sinceConnected > OFFLINE_THRESHOLD_SECS)) {
    changed = 'idle';
  }
  if (changed) {
    // The logged times are what others are shown from now on: the connection is this ping.
    if (now > next.last_connected_time) next.last_connected_time = now;
    next.logged_status = changed;
  }
  const write =
    next.last_active_time !== prev.last_active_time ||
    next.last_connected_time !== prev.last_connected_time ||
    next.logged_status !== prev.logged_status;
  return { next, write, changed };
}
