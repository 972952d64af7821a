import type { Event } from '../event-types.js';

/**
 * A message as sent: everything a projection and an event queue need, so neither has to read
 * other tables to know who got it or how it looked (the row may be edited or deleted later).
 */
export type MessageSent = Event<'MessageSent', {
  message_id: number;
  realm_id: number;
  sender_id: number;
  /** null for direct messages */
  stream_id: number | null;
  topic: string;
  recipient_id: number;
  /** key of the recipient set: "stream:<id>", "user:<id>" or "group:<ids>" */
  recipient_key: string;
  /** direct messages: every participant, sender included, sorted; [] for channel messages */
  dm_user_ids: number[];
  content: string;
  rendered_content: string;
  client: string;
  date_sent: number;
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
  /** recipients mentioned personally or through a group */
  mentioned_user_ids: number[];
  stream_wildcard: boolean;
  topic_wildcard: boolean;
  /**
   * receivers a topic wildcard mention flags: those who took part in the topic (sent to it or
   * reacted in it) when the message was sent, sender included; absent in events written before
   * this field existed (nobody is flagged then)
   */
  topic_wildcard_user_ids?: number[];
  /** recipients with one of their alert words in the content */
  alerted_user_ids: number[];
  /** receivers who had muted the sender: it arrives read for them; absent in events written before this field */
  muter_user_ids?: number[];
  /** other receivers for whom it arrives read: the mover, for Notification Bot's notice of a move; absent: none */
  read_for_user_ids?: number[];
  read_by_sender: boolean;
  attachment_paths: string[];
  /** queue that sent it and its local id, echoed back to that queue */
  sender_queue_id: string | null;
  local_id: string | null;
  /**
   * The widget submessage the message was sent with (a /poll or /todo content, or widget_content):
   * its id and its JSON text ({widget_type, extra_data}); absent for other messages.
   */
  widget_submessage_id?: number;
  widget_content?: string;
  /**
   * The outgoing webhook bots the message triggers, as the real server decides at send time: a
   * bot mentioned in a channel message ('mention'), a recipient of a direct message
   * ('direct_message'); none for a message a bot sent. Absent: none.
   */
  outgoing_webhooks?: OutgoingWebhookTrigger[];
}>;

export interface OutgoingWebhookTrigger {
  bot_id: number;
  trigger: 'mention' | 'direct_message';
}

/** Content and/or topic/channel of one or more messages changed (PATCH /messages/{id}). */
export type MessageEdited = Event<'MessageEdited', {
  message_id: number;
  /** every message changed (more than one when a topic move propagates) */
  message_ids: number[];
  realm_id: number;
  user_id: number;
  edit_timestamp: number;
  stream_id: number | null;
  orig_topic: string;
  /** content change (null: unchanged) */
  content: string | null;
  rendered_content: string | null;
  prev_content: string | null;
  prev_rendered_content: string | null;
  is_me_message: boolean | null;
  has_link: boolean | null;
  has_image: boolean | null;
  has_attachment: boolean | null;
  mentioned_user_ids: number[] | null;
  prev_mentioned_user_ids: number[] | null;
  stream_wildcard: boolean | null;
  topic_wildcard: boolean | null;
  /** content change: receivers the new content's topic wildcard mention flags (see MessageSent) */
  topic_wildcard_user_ids?: number[] | null;
  /**
   * content change: receivers with one of their alert words in the new content, and those whose
   * has_alert_word flag was set before (the fold sets and clears the flag by the difference);
   * absent in events written before these fields existed (the flag is left alone then)
   */
  alerted_user_ids?: number[];
  prev_alerted_user_ids?: number[];
  /** uploads the new content links to; null when the content did not change */
  attachment_paths: string[] | null;
  /**
   * content change: the path ids of the uploads the message linked before the edit (only newly
   * linked ones are announced to the sender); absent in events written before this field existed
   */
  prev_attachment_path_ids?: string[];
  /** move (null: unchanged) */
  new_topic: string | null;
  new_stream_id: number | null;
  propagate_mode: 'change_one' | 'change_later' | 'change_all';
  /**
   * a move between channels: the moved messages' message_moved_receptions rows as they were when
   * the move was decided (an earlier move's answers), grouped by user. With the old channel's
   * reception spans they say who had the messages before this move: the audience of its events
   * (the fold replaces these rows before the events are prepared). Absent on other edits and in
   * moves written before this field existed (the old channel's spans alone then).
   */
  prior_moved_receptions?: MovedReceptions;
  /** direct-message participants (for delivery); [] for channel messages */
  dm_user_ids: number[];
}>;

/** message_moved_receptions rows, grouped: each user's messages received (or not) against the spans. */
export type MovedReceptions = Array<{ user_id: number; received: boolean; message_ids: number[] }>;

export type MessagesDeleted = Event<'MessagesDeleted', {
  realm_id: number;
  message_ids: number[];
  message_type: 'stream' | 'private';
  stream_id: number | null;
  topic: string | null;
  dm_user_ids: number[];
}>;

export type ReactionAdded = Event<'ReactionAdded', {
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}>;
export type ReactionRemoved = Event<'ReactionRemoved', {
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}>;

/** A user's flag changed on some messages; `read_through` moves the read watermark (mark all as read). */
export type MessageFlagsChanged = Event<'MessageFlagsChanged', {
  user_id: number;
  op: 'add' | 'remove';
  flag: string;
  message_ids: number[];
  all: boolean;
  read_through: number | null;
  /** for op remove of read: what clients need to put the messages back in their unread counts */
  message_details: Record<string, Record<string, unknown>> | null;
}>;

export type MessageEvent =
  | MessageSent
  | MessageEdited
  | MessagesDeleted
  | ReactionAdded
  | ReactionRemoved
  | MessageFlagsChanged;
