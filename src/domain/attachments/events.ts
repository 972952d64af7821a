import type { Event } from '../event-types.js';

export type AttachmentUploaded = Event<'AttachmentUploaded', {
  attachment_id: number;
  realm_id: number;
  owner_id: number;
  name: string;
  /** `<realm_id>/<2 hex>/<random>/<file name>`; the file's URL is /user_uploads/<path_id>. */
  path_id: string;
  content_type: string;
  size: number;
  /** milliseconds since the epoch */
  create_time: number;
  /** bytes used by the realm's uploads, this one included */
  upload_space_used: number;
}>;

/**
 * The file is gone: its owner deleted it ('user'), the last message linking to it was deleted
 * ('unlinked'), or it was never used in a message before the retention period ran out ('unused').
 */
export type AttachmentDeleted = Event<'AttachmentDeleted', {
  attachment_id: number;
  realm_id: number;
  owner_id: number;
  path_id: string;
  reason: 'user' | 'unlinked' | 'unused';
  upload_space_used: number;
}>;

export type AttachmentEvent = AttachmentUploaded | AttachmentDeleted;
