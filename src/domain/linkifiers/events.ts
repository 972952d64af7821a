import type { Event } from '../event-types.js';

export type LinkifierAdded = Event<'LinkifierAdded', {
  realm_id: number;
  linkifier_id: number;
  pattern: string;
  url_template: string;
  order: number;
}>;
export type LinkifierUpdated = Event<'LinkifierUpdated', { realm_id: number; linkifier_id: number; pattern: string; url_template: string }>;
export type LinkifierRemoved = Event<'LinkifierRemoved', { realm_id: number; linkifier_id: number }>;
/** The realm's linkifiers now apply in this order. */
export type LinkifiersReordered = Event<'LinkifiersReordered', { realm_id: number; ordered_linkifier_ids: number[] }>;

export type LinkifierEvent = LinkifierAdded | LinkifierUpdated | LinkifierRemoved | LinkifiersReordered;
