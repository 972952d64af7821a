import type { Event } from '../event-types.js';

/**
 * The organization was deactivated by an owner (POST /realm/deactivate): from this event on every
 * API key is refused and every event queue has ended.
 */
export type RealmDeactivated = Event<'RealmDeactivated', { realm_id: number; reason: 'owner_request' }>;

/** The server's operator brought the organization back (`npm run cli -- reactivate-realm`). */
export type RealmReactivated = Event<'RealmReactivated', { realm_id: number }>;

export type RealmDeactivationEvent = RealmDeactivated | RealmReactivated;
