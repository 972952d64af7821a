import type { ColumnType, JSONColumnType } from 'kysely';

/** Table of migration 0110: scheduled messages. */
export interface ScheduledMessagesTable {
  id: number;
  realm_id: number;
  sender_id: number;
  type: string;
  stream_id: number | null;
  to: JSONColumnType<number[], string, string>;
  topic: string;
  content: string;
  rendered_content: string;
  scheduled_timestamp: ColumnType<number, number, number>;
  read_by_sender: boolean;
  client: string;
  failed: ColumnType<boolean, boolean | undefined, boolean>;
  failure_message: ColumnType<string | null, string | null | undefined, string | null>;
  delivered: ColumnType<boolean, boolean | undefined, boolean>;
  delivered_message_id: ColumnType<number | null, number | null | undefined, number | null>;
  version: number;
}

export interface ScheduledMessageTables {
  scheduled_messages: ScheduledMessagesTable;
}
