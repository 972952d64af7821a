import type { RealmEvent } from './realm/events.js';
import type { UserEvent } from './users/events.js';
import type { QueueEvent } from './queues/events.js';
import type { ChannelEvent } from './channels/events.js';

/** The one union of every domain event. Each area adds its union here. */
export type DomainEvent =
  | RealmEvent
  | UserEvent
  | QueueEvent
  | ChannelEvent;
export type DomainEventType = DomainEvent['type'];
export type EventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
export type DataOf<T extends DomainEventType> = EventOf<T>['data'];
