import { currentUnicodeEmojiName } from '../emoji/catalogue.js';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { MessagesTable } from '../db/schema/messages.js';
import { FlagBit, flagsOf } from '../domain/messages/flags.js';
import { renderTopicLinks, type Linkifier } from '../markdown/index.js';
import { apiEmail, avatarUrlFor, canSeeDeliveryEmail, type UserRow } from './users.js';
import { realmHost, type RealmRow } from './realm.js';
import { messageExtras, viewerMessageState } from './message-extras.js';
import { buildNarrow, mutedSql, parseNarrow, readThroughOf, receivedSql, topicMutedSql, unreadSql, withReadThrough, type NarrowViewer, type ReadingViewer } from './narrow.js';
import { isSpectator, type Viewer } from '../visibility.js';

export type MessageRow = Omit<Selectable<MessagesTable>, 'search_tsv'>;

export const MESSAGE_COLUMNS = [
  'm.id', 'm.realm_id', 'm.stream_id', 'm.topic', 'm.sender_id', 'm.date_sent', 'm.content', 'm.rendered_content', 'm.recipient_id',
  'm.dm_key', 'm.client', 'm.is_me_message', 'm.has_link', 'm.has_image', 'm.has_attachment', 'm.stream_wildcard', 'm.topic_wildcard',
  'm.last_edit_timestamp', 'm.edit_history', 'm.version',
] as const;

/**
 * What formatMessages reads of a message row: every column it shows, and one or both contents
 * (a read shows one of them; fetching the other would double the text a window moves).
 */
export type FormatRow = Pick<MessageRow, 'id' | 'stream_id' | 'topic' | 'sender_id' | 'date_sent' | 'recipient_id' | 'dm_key' | 'client'
  | 'is_me_message' | 'stream_wildcard' | 'last_edit_timestamp' | 'edit_history'> & Partial<Pick<MessageRow, MessageContent>>;
export type MessageContent = 'content' | 'rendered_content';

const FORMAT_COLUMNS = [
  'm.id', 'm.stream_id', 'm.topic', 'm.sender_id', 'm.date_sent', 'm.recipient_id', 'm.dm_key', 'm.client', 'm.is_me_message',
  'm.stream_wildcard', 'm.last_edit_timestamp', 'm.edit_history',
] as const;

export async function getMessageRow(db: Db, id: number): Promise<MessageRow | undefined> {
  if (!Number.isInteger(id) || id <= 0 || id > 2_147_483_647) return undefined;
  return db.selectFrom('messages as m').select(MESSAGE_COLUMNS).where('m.id', '=', id).executeTakeFirst();
}

export async function getMessageRows(db: Db, ids: number[]): Promise<MessageRow[]> {
  ids = ids.filter((id) => Number.isInteger(id) && id > 0 && id <= 2_147_483_647);
  if (ids.length === 0) return [];
  return db.selectFrom('messages as m').select(MESSAGE_COLUMNS).where('m.id', 'in', ids).orderBy('m.id').execute();
}

export { readThroughOf };

/** The user as a narrow's viewer, with their read watermark. */
export function narrowViewer(db: Db, user: UserRow): Promise<NarrowViewer> {
  return withReadThrough(db, { user_id: user.id, role: user.role, realm_id: user.realm_id });
}

export interface MessageFormatOptions {
  applyMarkdown: boolean;
  clientGravatar: boolean;
  realm: RealmRow;
  linkifiers: Linkifier[];
  /** Where user rows come from (a cache); a query by default. */
  userRows?: (ids: number[]) => Promise<UserRow[]>;
}

/** Per-user state of messages for one viewer: flag bits and whether each message was received. */
export async function userMessageState(db: Db, viewerId: number, rows: ReadonlyArray<Pick<MessageRow, 'id' | 'stream_id' | 'sender_id' | 'dm_key'>>): Promise<{ bits: Map<number, number>; received: Set<number> }> {
  const ids = rows.map((r) => r.id);
  if (ids.length === 0) return { bits: new Map(), received: new Set() };
  const streamIds = [...new Set(rows.filter((r) => r.stream_id !== null).map((r) => r.stream_id!))];
  const [flagRows, spans, moved] = await Promise.all([
    db.selectFrom('message_flags').select(['message_id', 'flags']).where('user_id', '=', viewerId).where('message_id', 'in', ids).execute(),
    streamIds.length === 0 ? Promise.resolve([]) : db
      .selectFrom('message_reception_spans')
      .select(['stream_id', 'from_id', 'to_id'])
      .where('user_id', '=', viewerId)
      .where('stream_id', 'in', streamIds)
      .execute(),
    streamIds.length === 0 ? Promise.resolve([]) : db
      .selectFrom('message_moved_receptions')
      .select(['message_id', 'received'])
      .where('user_id', '=', viewerId)
      .where('message_id', 'in', ids)
      .execute(),
  ]);
  return viewerMessageState(viewerId, rows, flagRows, spans, moved);
}

/** Message objects as SPEC.md's Message table describes them, as `viewer` sees them. */
export async function formatMessages(
  db: Db,
  viewer: Viewer,
  rows: readonly FormatRow[],
  options: MessageFormatOptions,
): Promise<Array<Record<string, unknown>>> {
  if (rows.length === 0) return [];
  const userRows = options.userRows ?? ((ids: number[]) => db.selectFrom('users').selectAll().where('id', 'in', ids).execute());
  const userIds = new Set<number>();
  for (const r of rows) {
    userIds.add(r.sender_id);
    if (r.dm_key) for (const id of r.dm_key.split(',')) userIds.add(Number(id));
  }
  const [extras, users] = await Promise.all([
    messageExtras(db, viewer.user_id, rows),
    userRows([...userIds]),
  ]);
  const reactors = new Set<number>();
  for (const list of extras.reactions.values()) for (const r of list) if (!userIds.has(r.user_id)) reactors.add(r.user_id);
  if (reactors.size > 0) users.push(...(await userRows([...reactors])));
  const usersById = new Map(users.map((u) => [u.id, u]));
  const host = realmHost(options.realm);
  const allowEditHistory = (options.realm.properties as Record<string, unknown>).allow_edit_history !== false;
  // Messages of a window mostly share a few topics and senders: their parts are built once each.
  const topicLinks = new Map<string, unknown[]>();
  const senderParts = new Map<number, SenderParts>();
  const topicLinksOf = (topic: string) => {
    let links = topicLinks.get(topic);
    if (!links) topicLinks.set(topic, (links = renderTopicLinks(topic, options.linkifiers)));
    return links;
  };
  const senderPartsOf = (sender: UserRow) => {
    let parts = senderParts.get(sender.id);
    if (!parts) senderParts.set(sender.id, (parts = senderPartsFor(sender, viewer, host, options.clientGravatar)));
    return parts;
  };
  return rows.map((row) => {
    const message = messageObject(row, {
      sender: usersById.get(row.sender_id),
      viewer,
      host,
      realmStr: options.realm.string_id,
      streamName: row.stream_id !== null ? extras.streamNames.get(row.stream_id) ?? '' : '',
      participants: row.dm_key ? row.dm_key.split(',').map((id) => usersById.get(Number(id))).filter((u): u is UserRow => !!u) : [],
      applyMarkdown: options.applyMarkdown,
      clientGravatar: options.clientGravatar,
      linkifiers: options.linkifiers,
      allowEditHistory,
      topicLinksOf,
      senderPartsOf,
    });
    message.reactions = (extras.reactions.get(row.id) ?? []).map((r) => reactionObject(r, usersById.get(r.user_id), host));
    message.submessages = (extras.submessages.get(row.id) ?? []).map((r) => ({ msg_type: r.msg_type, content: r.content, message_id: r.message_id, sender_id: r.sender_id, id: r.id }));
    // A spectator has no flags of their own: every message is read to them, as the real server says.
    message.flags = isSpectator(viewer) ? ['read'] : flagsOf({
      userId: viewer.user_id,
      senderId: row.sender_id,
      messageId: row.id,
      readThrough: extras.readThrough,
      bits: extras.bits.get(row.id) ?? 0,
      received: extras.received.has(row.id),
      streamWildcard: row.stream_wildcard,
    });
    return message;
  });
}

export function reactionObject(
  r: { emoji_name: string; emoji_code: string; reaction_type: string; user_id: number },
  user: UserRow | undefined,
  host: string,
): Record<string, unknown> {
  return {
    // Rows folded from version 1 events before the upcaster existed still hold the old table's names.
    emoji_name: r.reaction_type === 'unicode_emoji' ? currentUnicodeEmojiName(r.emoji_code, r.emoji_name) : r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
    user_id: r.user_id,
    user: { id: r.user_id, email: user ? apiEmail(user, host) : '', full_name: user?.full_name ?? '', is_mirror_dummy: false },
  };
}

export interface MessageObjectInput {
  sender: UserRow | undefined;
  viewer: Viewer;
  host: string;
  realmStr: string;
  streamName: string;
  participants: UserRow[];
  applyMarkdown: boolean;
  clientGravatar: boolean;
  linkifiers: Linkifier[];
  allowEditHistory: boolean;
  /** Memoized topic links and sender fields, for a caller formatting many messages at once. */
  topicLinksOf?: (topic: string) => unknown[];
  senderPartsOf?: (sender: UserRow) => SenderParts;
}

/** The fields of a Message object that depend only on its sender (and who is looking). */
export interface SenderParts {
  email: string;
  fullName: string;
  avatarUrl: string | null;
}

export function senderPartsFor(sender: UserRow, viewer: Viewer, host: string, clientGravatar: boolean): SenderParts {
  return { email: apiEmail(sender, host), fullName: sender.full_name, avatarUrl: avatarUrlFor(sender, canSeeDeliveryEmail(viewer, sender), clientGravatar) ?? null };
}

/** The Message object without reactions and flags (shared by reads and `message` events). */
export function messageObject(
  row: Pick<MessageRow, 'id' | 'stream_id' | 'topic' | 'recipient_id' | 'sender_id' | 'client' | 'is_me_message' | 'date_sent' | 'last_edit_timestamp' | 'edit_history'>
    & Partial<Pick<MessageRow, MessageContent>>,
  input: MessageObjectInput,
): Record<string, unknown> {
  const sender = input.sender
    ? input.senderPartsOf?.(input.sender) ?? senderPartsFor(input.sender, input.viewer, input.host, input.clientGravatar)
    : undefined;
  const channel = row.stream_id !== null;
  // One object literal for every message, so they all share one shape: built property by property (or
  // by Object.assign onto a two-field object), they were about twice as dear to make and to JSON-encode.
  const out: Record<string, unknown> = {
    id: row.id,
    type: channel ? 'stream' : 'private',
    subject: row.topic,
    topic_links: channel ? input.topicLinksOf?.(row.topic) ?? renderTopicLinks(row.topic, input.linkifiers) : [],
    content: (input.applyMarkdown ? row.rendered_content : row.content) ?? '',
    content_type: input.applyMarkdown ? 'text/html' : 'text/x-markdown',
    display_recipient: channel
      ? input.streamName
      : input.participants.map((u) => ({ id: u.id, email: apiEmail(u, input.host), full_name: u.full_name, is_mirror_dummy: false })),
    recipient_id: row.recipient_id,
    sender_id: row.sender_id,
    sender_email: sender?.email ?? '',
    sender_full_name: sender?.fullName ?? '',
    sender_realm_str: input.realmStr,
    avatar_url: sender?.avatarUrl ?? null,
    client: row.client,
    is_me_message: row.is_me_message,
    timestamp: Number(row.date_sent),
    reactions: [],
    submessages: [],
  };
  if (channel) out.stream_id = row.stream_id;
  if (row.last_edit_timestamp !== null) {
    out.last_edit_timestamp = Number(row.last_edit_timestamp);
    if (input.allowEditHistory && row.edit_history) out.edit_history = row.edit_history;
  }
  return out;
}

export interface FetchParams {
  anchor: number | 'newest' | 'oldest' | 'first_unread';
  includeAnchor: boolean;
  numBefore: number;
  numAfter: number;
  narrow: unknown;
}

export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/**
 * GET /messages: the window of matching messages around the anchor, with the `contents` asked for
 * (and the rendered one for a search, whose hits are highlighted in it). `channelsVersion`: the
 * tables version of CHANNEL_LOOKUP_TABLES taken before the read, when the caller has one (the
 * narrow's channel look-up may then come from those made at that version).
 */
export async function fetchMessages(db: Db, viewer: ReadingViewer, realm: RealmRow, params: FetchParams, contents: readonly MessageContent[] = ['content', 'rendered_content'], channelsVersion?: number) {
  const narrow = await buildNarrow(db, viewer, realmHost(realm), parseNarrow(params.narrow), channelsVersion);
  const where = sql.join(narrow.conditions, sql` AND `);
  let anchor: number;
  if (params.anchor === 'newest') anchor = LARGER_THAN_MAX_MESSAGE_ID;
  else if (params.anchor === 'oldest') anchor = 0;
  // A spectator has read everything (find_first_unread_anchor without a user): first_unread is newest.
  else if (params.anchor === 'first_unread' && isSpectator(viewer)) anchor = LARGER_THAN_MAX_MESSAGE_ID;
  else if (params.anchor === 'first_unread') {
    // The first unread message the viewer would see: not in a muted topic, nor (outside a channel's own
    // view) in a muted channel, as on the real server.
    const muted = narrow.stream ? topicMutedSql(viewer.user_id) : mutedSql(viewer.user_id);
    const first = await sql<{ id: number }>`SELECT m.id FROM messages m WHERE ${where} AND ${unreadSql(await withReadThrough(db, viewer))}
      AND NOT ${muted} ORDER BY m.id ASC LIMIT 1`.execute(db);
    anchor = first.rows[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID;
  } else anchor = Math.min(params.anchor, LARGER_THAN_MAX_MESSAGE_ID);

  const wanted = new Set(narrow.searchTerms.length > 0 ? [...contents, 'rendered_content'] : contents);
  const columns = sql.raw([...FORMAT_COLUMNS, ...[...wanted].map((c) => `m.${c}`)].join(', '));
  const before = params.numBefore === 0 || anchor === 0 ? [] : (await sql<FormatRow>`
    SELECT ${columns} FROM messages m WHERE ${where} AND m.id < ${anchor}::int8 ORDER BY m.id DESC LIMIT ${params.numBefore}`.execute(db)).rows;
  const afterLimit = params.numAfter + (params.includeAnchor ? 1 : 0);
  // Nothing lies at or after the `newest` anchor.
  const after = afterLimit === 0 || anchor === LARGER_THAN_MAX_MESSAGE_ID ? [] : (await sql<FormatRow>`
    SELECT ${columns} FROM messages m WHERE ${where} AND ${params.includeAnchor ? sql`m.id >= ${anchor}::int8` : sql`m.id > ${anchor}::int8`}
    ORDER BY m.id ASC LIMIT ${afterLimit}`.execute(db)).rows;
  const foundAnchor = params.includeAnchor && after.length > 0 && after[0]!.id === anchor;
  const greater = after.filter((r) => r.id > anchor);
  const foundNewest = anchor === LARGER_THAN_MAX_MESSAGE_ID || greater.length < params.numAfter;
  const foundOldest = anchor === 0 || before.length < params.numBefore;
  const rows = [...before.reverse(), ...(foundAnchor ? [after[0]!] : []), ...greater.slice(0, params.numAfter)];
  return { rows, anchor, foundAnchor, foundNewest, foundOldest, searchTerms: narrow.searchTerms };
}

/**
 * Ids among `ids` that match the narrow for the viewer. Only messages the viewer received can match, as
 * on the real server (a client asks about messages that reached it as events).
 */
export async function idsMatchingNarrow(db: Db, viewer: NarrowViewer, realm: RealmRow, narrowInput: unknown, ids: number[]) {
  const narrow = await buildNarrow(db, viewer, realmHost(realm), parseNarrow(narrowInput));
  ids = ids.filter((id) => Number.isInteger(id) && id > 0 && id <= 2_147_483_647);
  if (ids.length === 0) return { ids: [] as number[], searchTerms: narrow.searchTerms };
  const where = sql.join([...narrow.conditions, receivedSql(viewer.user_id)], sql` AND `);
  const rows = await sql<{ id: number }>`SELECT m.id FROM messages m WHERE ${where} AND m.id IN (${sql.join(ids)}) ORDER BY m.id`.execute(db);
  return { ids: rows.rows.map((r) => r.id), searchTerms: narrow.searchTerms };
}

/** Unread message ids (up to a cap) of a user, with what unread_msgs groups them by. */
export async function unreadMessages(db: Db, viewer: NarrowViewer, limit = MAX_UNREAD_MESSAGES) {
  const flags = sql`COALESCE((SELECT f.flags FROM message_flags f WHERE f.user_id = ${viewer.user_id} AND f.message_id = m.id), 0)`;
  // A channel wildcard counts for those who received the message (a message marked unread later is not).
  const rows = await sql<{ id: number; stream_id: number | null; topic: string; sender_id: number; dm_key: string | null; mentioned: boolean; wildcard_mentioned: boolean; muted: boolean }>`
    SELECT m.id, m.stream_id, m.topic, m.sender_id, m.dm_key,
      (${flags} & ${FlagBit.MENTIONED}) <> 0 AS mentioned,
      ((${flags} & ${FlagBit.TOPIC_WILDCARD}) <> 0 OR (m.stream_wildcard AND ${receivedSql(viewer.user_id)})) AS wildcard_mentioned,
      ${mutedSql(viewer.user_id)} AS muted
    FROM messages m
    WHERE m.realm_id = ${viewer.realm_id} AND ${unreadSql(viewer)}
    ORDER BY m.id DESC LIMIT ${limit}`.execute(db);
  return rows.rows.reverse();
}

/** The real server's cap on the unread messages /register lists (the newest ones are kept). */
export const MAX_UNREAD_MESSAGES = 50_000;

/** Wraps search hits in `<span class="highlight">`, only in text outside HTML tags. */
export function highlight(html: string, terms: string[], escape = false): string {
  const source = escape ? escapeHtml(html) : html;
  if (terms.length === 0) return source;
  const words = terms.map((t) => t.toLowerCase().replace(/[^\p{L}\p{N}_]/gu, '')).filter(Boolean);
  if (words.length === 0) return source;
  return source.replace(/(<[^>]*>)|([^<]+)/g, (_m, tag: string | undefined, text: string | undefined) => {
    if (tag) return tag;
    return text!.replace(/[\p{L}\p{N}_]+/gu, (word) => {
      const lower = word.toLowerCase();
      return words.some((w) => lower === w || (w.length >= 3 && lower.startsWith(stem(w))) || stem(lower) === stem(w))
        ? `<span class="highlight">${word}</span>`
        : word;
    });
  });
}

// A crude English stem, enough to highlight "runs" for a search for "running".
function stem(word: string): string {
  return word.replace(/(ing|ed|es|s)$/, '') || word;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

/** The newest message the user received (GET /users/me, /register's max_message_id); -1 when none. */
export async function maxReceivedMessageId(db: Db, user: { id: number; realm_id: number }): Promise<number> {
  const row = await sql<{ m: number | null }>`SELECT max(m.id) AS m FROM messages m WHERE m.realm_id = ${user.realm_id} AND ${receivedSql(user.id)}`.execute(db);
  return row.rows[0]?.m ?? -1;
}
