/** Table of migration 0178: submessages (a widget and what was attached to it since). */
export interface SubmessagesTable {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  content: string;
}

export interface SubmessagesTables {
  submessages: SubmessagesTable;
}
