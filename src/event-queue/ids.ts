/**
 * Client event ids come from the global order: id = position * 1000 + k. One log event may give a
 * queue several client events (k = 0..499); heartbeats at a head position use k = 500..999.
 * Ids only grow, with gaps, as the API allows.
 */
export const SLOTS = 1000;
export const HEARTBEAT_BASE = 500;

export const clientEventId = (position: number, k: number) => position * SLOTS + k;
export const positionOf = (id: number) => Math.floor(id / SLOTS);
export const slotOf = (id: number) => ((id % SLOTS) + SLOTS) % SLOTS;
/** The id a queue registered at `position` reports as last_event_id: everything up to it is in the state. */
export const snapshotId = (position: number) => clientEventId(position, HEARTBEAT_BASE - 1);
