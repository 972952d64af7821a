import type { Event } from '../event-types.js';

/** A device token for push notifications (registered again: its app id and time are refreshed). */
export type PushDeviceRegistered = Event<'PushDeviceRegistered', { user_id: number; token: string; appid: string; time: number }>;
export type PushDeviceRemoved = Event<'PushDeviceRemoved', { user_id: number; token: string }>;

export type PushEvent = PushDeviceRegistered | PushDeviceRemoved;
