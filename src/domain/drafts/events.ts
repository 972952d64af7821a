import type { Event } from '../event-types.js';

export interface DraftData {
  id: number;
  type: '' | 'stream' | 'private';
  to: number[];
  topic: string;
  content: string;
  /** UNIX seconds of the last edit. */
  timestamp: number;
}

export type DraftsCreated = Event<'DraftsCreated', { user_id: number; drafts: DraftData[] }>;
export type DraftUpdated = Event<'DraftUpdated', { user_id: number; draft: DraftData }>;
/** `reason` 'sync_disabled': the user turned enable_drafts_synchronization off (no client event). */
export type DraftDeleted = Event<'DraftDeleted', { user_id: number; draft_id: number; reason: 'user' | 'sync_disabled' }>;

export type DraftEvent = DraftsCreated | DraftUpdated | DraftDeleted;
