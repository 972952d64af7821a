import type { Event } from '../event-types.js';

export type QueueRegistered = Event<'QueueRegistered', {
  queue_id: string;
  user_id: number;
  realm_id: number;
  event_types: string[] | null;
  narrow: unknown[];
  options: Record<string, unknown>;
  lifespan_secs: number;
  created_at: number;
}>;
export type QueueDeleted = Event<'QueueDeleted', { queue_id: string; user_id: number; reason: 'client' | 'expired' | 'realm_deactivated' }>;

export type QueueEvent = QueueRegistered | QueueDeleted;
