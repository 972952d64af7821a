/** Bits of message_flags.flags (exceptions stored per user and message; see docs/MESSAGE-STATE.md). */
export const FlagBit = {
  READ: 1,
  /** marked unread although the watermark or authorship says read */
  UNREAD: 2,
  STARRED: 4,
  MENTIONED: 8,
  HAS_ALERT_WORD: 16,
  COLLAPSED: 32,
  /** a topic wildcard mention (@**topic**) that counts for this user: they took part in the topic */
  TOPIC_WILDCARD: 64,
} as const;

/**
 * The flags the real server keeps per user and message and names in its API (its UserMessage
 * flags less the internal ones); any other name is an invalid flag. `wildcard_mentioned` is only
 * reported, never stored, so it is not among them.
 */
export const STORED_FLAGS = [
  'read', 'starred', 'collapsed', 'mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'group_mentioned',
  'force_expand', 'force_collapse', 'has_alert_word', 'historical',
] as const;
/** Flags the server manages (or no longer uses); asking to change them is an error. */
export const NON_EDITABLE_FLAGS: readonly string[] = [
  'has_alert_word', 'mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned', 'group_mentioned', 'historical', 'force_expand', 'force_collapse',
];
/** Flags a client may change with POST /messages/flags: the stored ones not managed by the server. */
export const EDITABLE_FLAGS = ['read', 'starred', 'collapsed'] as const;

export interface FlagInputs {
  userId: number;
  senderId: number;
  messageId: number;
  readThrough: number;
  bits: number;
  /** the user received the message (subscribed when sent, or a DM participant, or its sender) */
  received: boolean;
  streamWildcard: boolean;
}

/** The flags list of one message for one user, from the sparse state. */
export function flagsOf(f: FlagInputs): string[] {
  const out: string[] = [];
  if (isRead(f)) out.push('read');
  if (f.bits & FlagBit.STARRED) out.push('starred');
  if (f.bits & FlagBit.COLLAPSED) out.push('collapsed');
  if (f.bits & FlagBit.MENTIONED) out.push('mentioned');
  if (f.received && f.streamWildcard) out.push('stream_wildcard_mentioned');
  const topicWildcard = (f.bits & FlagBit.TOPIC_WILDCARD) !== 0;
  if (topicWildcard) out.push('topic_wildcard_mentioned');
  if ((f.received && f.streamWildcard) || topicWildcard) out.push('wildcard_mentioned');
  if (f.bits & FlagBit.HAS_ALERT_WORD) out.push('has_alert_word');
  if (!f.received) out.push('historical');
  return out;
}

export function isRead(f: Pick<FlagInputs, 'bits' | 'received' | 'messageId' | 'readThrough' | 'userId' | 'senderId'>): boolean {
  if (f.bits & FlagBit.UNREAD) return false;
  if (!f.received) return true;
  return (f.bits & FlagBit.READ) !== 0 || f.messageId <= f.readThrough;
}
