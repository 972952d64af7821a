import type { Event } from '../event-types.js';

export type PlaygroundAdded = Event<'PlaygroundAdded', {
  realm_id: number;
  playground_id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}>;
export type PlaygroundRemoved = Event<'PlaygroundRemoved', { realm_id: number; playground_id: number }>;

export type PlaygroundEvent = PlaygroundAdded | PlaygroundRemoved;
