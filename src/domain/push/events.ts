import type { Event } from '../event-types.js';

/** Which service a token belongs to, when it came through the legacy per-service routes. */
export type PushTokenKind = 'apns' | 'fcm';

/**
 * A device token for push notifications (registered again: its app id, kind and time are refreshed).
 * `kind` is absent for tokens from /users/me/push_device_token; an FCM token has appid ''.
 */
export type PushDeviceRegistered = Event<'PushDeviceRegistered', { user_id: number; token: string; appid: string; time: number; kind?: PushTokenKind }>;
export type PushDeviceRemoved = Event<'PushDeviceRemoved', { user_id: number; token: string }>;

export type PushEvent = PushDeviceRegistered | PushDeviceRemoved;
