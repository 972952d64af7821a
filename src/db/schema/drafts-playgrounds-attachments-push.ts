import type { ColumnType, JSONColumnType } from 'kysely';

/** Tables of migration 0040: drafts, code playgrounds, attachments and push device tokens. */
export interface DraftsTable {
  id: number;
  user_id: number;
  type: string;
  to: JSONColumnType<number[], string, string>;
  topic: string;
  content: string;
  timestamp: number;
}

export interface PlaygroundsTable {
  id: number;
  realm_id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export interface AttachmentsTable {
  id: number;
  realm_id: number;
  owner_id: number;
  name: string;
  /** `<realm_id>/<random>/<file name>`: the part of the URL after /user_uploads/. */
  path_id: string;
  content_type: string;
  size: number;
  /** Milliseconds since the epoch, as the API reports it. */
  create_time: number;
  /** The last message linking to it was deleted. */
  orphaned: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface AttachmentMessagesTable {
  attachment_id: number;
  message_id: number;
  /** Milliseconds since the epoch. */
  date_sent: number;
}

export interface PushDevicesTable {
  user_id: number;
  token: string;
  appid: string;
  last_updated: number;
  /** 'apns' or 'fcm' for tokens from the per-service routes (migration 0151); null from push_device_token */
  kind: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface DraftPlaygroundAttachmentPushTables {
  drafts: DraftsTable;
  playgrounds: PlaygroundsTable;
  attachments: AttachmentsTable;
  attachment_messages: AttachmentMessagesTable;
  push_devices: PushDevicesTable;
}
