import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { decideFlags } from '../domain/messages/decider.js';
import type { MessageFlagsChanged } from '../domain/messages/events.js';
import { FlagBit, NON_EDITABLE_FLAGS, STORED_FLAGS, isRead } from '../domain/messages/flags.js';
import type { StreamAppend } from '../eventstore/types.js';
import { buildNarrow, messageAccessibleTo, mutedSql, parseNarrow, receivedSql, unreadSql, type NarrowViewer } from '../read/narrow.js';
import { fetchMessages, getMessageRows, narrowViewer, userMessageState, type FetchParams, type MessageRow } from '../read/messages.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { flagsStream, invalidMessage, requireStreamForUser } from './messages.js';

/**
 * Message flags, as the real server changes them (zerver/actions/message_flags.py): POST
 * /messages/flags and /messages/flags/narrow, the mark-as-read endpoints, and marking a channel
 * read when its subscription ends. See docs/MESSAGE-STATE.md for how the flags are stored.
 */

type FlagOp = 'add' | 'remove';

/** The real server's checks, in its order: the flag exists, the user may change it, the operation. */
function checkFlagChange(op: string, flag: string): asserts op is FlagOp {
  if (!(STORED_FLAGS as readonly string[]).includes(flag)) throw errors.badRequest(`Invalid flag: '${flag}'`);
  if (NON_EDITABLE_FLAGS.includes(flag)) throw errors.badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw errors.badRequest(`Invalid message flag operation: '${op}'`);
}

/** Channels the user is subscribed to now. */
async function subscribedStreamIds(db: Db, userId: number): Promise<Set<number>> {
  const rows = await db.selectFrom('subscriptions').select('stream_id').where('user_id', '=', userId).where('active', '=', true).execute();
  return new Set(rows.map((r) => r.stream_id));
}

/**
 * What clients need to count messages as unread again (update_message_flags, remove read). A
 * personal mention always counts; a wildcard mention only outside muted conversations.
 */
async function messageDetails(db: Db, viewer: NarrowViewer, rows: MessageRow[]): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  if (rows.length === 0) return out;
  const state = await userMessageState(db, viewer.user_id, rows);
  const muted = new Set((await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE m.id IN (${sql.join(rows.map((r) => r.id))}) AND ${mutedSql(viewer.user_id)}`.execute(db)).rows.map((r) => r.id));
  for (const r of rows) {
    const bits = state.bits.get(r.id) ?? 0;
    const wildcard = (state.received.has(r.id) && r.stream_wildcard) || (bits & FlagBit.TOPIC_WILDCARD) !== 0;
    const mentioned = (bits & FlagBit.MENTIONED) !== 0 || (wildcard && !muted.has(r.id));
    const d: Record<string, unknown> = r.stream_id === null
      ? { type: 'private', user_ids: (r.dm_key ?? '').split(',').map(Number).filter((id) => id !== viewer.user_id).sort((a, b) => a - b) }
      : { type: 'stream', stream_id: r.stream_id, topic: r.topic, unmuted_stream_msg: !muted.has(r.id) };
    if (mentioned) d.mentioned = true;
    out[String(r.id)] = d;
  }
  return out;
}

/**
 * POST /messages/flags: changes the flag on the listed messages whose flag differs; returns how
 * many changed. A message the user never received counts as read and unflagged (the real server's
 * "historical" default), so only changing it from that default needs access to it, and asking to
 * read a message one cannot see, or to unstar it, is a no-op. Marking unread skips channel
 * messages of channels the user is not subscribed to. The update_message_flags event goes out even
 * when nothing changed, as on the real server.
 */
export async function changeFlags(ctx: ServiceContext, meta: RequestMeta, user: UserRow, op: string, flag: string, ids: readonly number[]): Promise<number> {
  checkFlagChange(op, flag);
  let requested = [...new Set(ids)];
  const viewer = await narrowViewer(ctx.db, user);
  let rows = await getMessageRows(ctx.db, requested);
  if (flag === 'read' && op === 'remove' && rows.some((r) => r.stream_id !== null)) {
    const subscribed = await subscribedStreamIds(ctx.db, user.id);
    const skipped = new Set(rows.filter((r) => r.stream_id !== null && !subscribed.has(r.stream_id)).map((r) => r.id));
    rows = rows.filter((r) => !skipped.has(r.id));
    requested = requested.filter((id) => !skipped.has(id));
  }
  const state = await userMessageState(ctx.db, user.id, rows);
  const bit = flag === 'read' ? FlagBit.READ : flag === 'starred' ? FlagBit.STARRED : FlagBit.COLLAPSED;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const hasFlag = (id: number): boolean => {
    const r = byId.get(id);
    // A message that does not exist holds the default of one never received: read, nothing else.
    if (!r) return flag === 'read';
    const bits = state.bits.get(id) ?? 0;
    if (flag !== 'read') return (bits & bit) !== 0;
    return isRead({ bits, received: state.received.has(id), messageId: id, readThrough: viewer.readThrough, userId: user.id, senderId: r.sender_id });
  };
  const changing = requested.filter((id) => hasFlag(id) !== (op === 'add'));
  // Only moving a message the user has no state for away from that default needs access to it.
  for (const id of changing) {
    if (state.received.has(id) || state.bits.has(id)) continue;
    const r = byId.get(id);
    if (!r || !(await messageAccessibleTo(ctx.db, viewer, r))) throw invalidMessage();
  }
  const changed = changing.map((id) => byId.get(id)!);
  const details = flag === 'read' && op === 'remove' ? await messageDetails(ctx.db, viewer, changed) : null;
  const events = decideFlags({ user_id: user.id, op, flag, message_ids: changing, all: false, read_through: null, message_details: details }, { announceEmpty: true });
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: flagsStream(user.id), expectedVersion: undefined, events }],
    result: undefined,
  }));
  return changing.length;
}

/** The user's unread message ids within a narrow (a channel, a topic). */
async function unreadIds(db: Db, viewer: NarrowViewer, realm: RealmRow, narrow: unknown[]): Promise<number[]> {
  const built = await buildNarrow(db, viewer, realmHost(realm), parseNarrow(narrow));
  const rows = await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE ${sql.join(built.conditions, sql` AND `)} AND ${unreadSql(viewer)} ORDER BY m.id`.execute(db);
  return rows.rows.map((r) => Number(r.id));
}

/**
 * POST /mark_all_as_read: moves the read watermark to the newest message. Its event says `all`
 * and lists no messages (clients reload their unread state), and goes out even when nothing was
 * unread, as on the real server.
 */
export async function markAllAsRead(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow): Promise<void> {
  const viewer = await narrowViewer(ctx.db, user);
  const ids = await unreadIds(ctx.db, viewer, realm, []);
  const max = await ctx.db.selectFrom('messages').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
  const readThrough = Math.max(Number(max?.m ?? 0), viewer.readThrough);
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{
      streamId: flagsStream(user.id),
      expectedVersion: undefined,
      events: [{ type: 'MessageFlagsChanged', data: { user_id: user.id, op: 'add', flag: 'read', message_ids: ids, all: true, read_through: readThrough, message_details: null } }],
    }],
    result: undefined,
  }));
}

/** Whether the user has (received, or holds flags of) a message in the channel's topic, its case aside. */
async function hasMessageInTopic(db: Db, userId: number, streamId: number, topic: string): Promise<boolean> {
  const { rows } = await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE m.stream_id = ${streamId} AND lower(m.topic) = lower(${topic})
      AND (${receivedSql(userId)} OR EXISTS (SELECT 1 FROM message_flags f WHERE f.user_id = ${userId} AND f.message_id = m.id))
    LIMIT 1`.execute(db);
  return rows.length > 0;
}

/**
 * POST /mark_stream_as_read and /mark_topic_as_read: an empty topic name means the whole channel
 * (the real server's check is on a non-empty name); a topic the user has no message in is an error.
 * No event when nothing was unread.
 */
export async function markConversationAsRead(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, streamId: number, topic?: string): Promise<void> {
  await requireStreamForUser(ctx.db, user, streamId);
  if (topic && !(await hasMessageInTopic(ctx.db, user.id, streamId, topic))) throw errors.badRequest(`No such topic '${topic}'`);
  const viewer = await narrowViewer(ctx.db, user);
  const narrow: unknown[] = [{ operator: 'channel', operand: streamId }];
  if (topic) narrow.push({ operator: 'topic', operand: topic });
  const ids = await unreadIds(ctx.db, viewer, realm, narrow);
  if (ids.length === 0) return;
  await changeFlags(ctx, meta, user, 'add', 'read', ids);
}

/**
 * The append that marks the unread messages of channels read for a user whose subscriptions to
 * them end (the real server does it right after the unsubscription, with an update_message_flags
 * event); none when nothing there is unread.
 */
export async function readOnLeaving(db: Db, user: UserRow, streamIds: readonly number[]): Promise<StreamAppend | undefined> {
  if (streamIds.length === 0) return undefined;
  const viewer = await narrowViewer(db, user);
  const { rows } = await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE m.stream_id IN (${sql.join([...streamIds])}) AND ${unreadSql(viewer)} ORDER BY m.id`.execute(db);
  const events: MessageFlagsChanged[] = decideFlags({
    user_id: user.id, op: 'add', flag: 'read', message_ids: rows.map((r) => Number(r.id)), all: false, read_through: null, message_details: null,
  });
  return events.length === 0 ? undefined : { streamId: flagsStream(user.id), expectedVersion: undefined, events };
}

/** At most this many messages per POST /messages/flags/narrow, before and after the anchor together. */
const MAX_MESSAGES_PER_UPDATE = 5000;

/** POST /messages/flags/narrow. */
export async function changeFlagsForNarrow(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  op: string,
  flag: string,
  window: FetchParams,
): Promise<Record<string, unknown>> {
  // The narrow's form is a parameter check, before the window's.
  parseNarrow(window.narrow);
  if (window.numBefore > 0 && window.numAfter > 0 && !window.includeAnchor) throw errors.badRequest('The anchor can only be excluded at an end of the range');
  // The real server's clamp: the side before the anchor keeps at least half when both ask for more.
  const numBefore = Math.min(window.numBefore, Math.max(MAX_MESSAGES_PER_UPDATE - window.numAfter, MAX_MESSAGES_PER_UPDATE / 2));
  const numAfter = Math.min(window.numAfter, MAX_MESSAGES_PER_UPDATE - numBefore);
  const viewer = await narrowViewer(ctx.db, user);
  const found = await fetchMessages(ctx.db, viewer, realm, { ...window, numBefore, numAfter });
  const ids = found.rows.map((r) => r.id);
  const updated = await changeFlags(ctx, meta, user, op, flag, ids);
  return {
    processed_count: ids.length,
    updated_count: updated,
    first_processed_id: ids[0] ?? null,
    last_processed_id: ids[ids.length - 1] ?? null,
    found_oldest: found.foundOldest,
    found_newest: found.foundNewest,
  };
}

/**
 * Marks read every message of the channel that the user has not read yet: the real server does so
 * when a channel is archived, so that it stops counting as unread.
 */
export async function markChannelReadFor(ctx: ServiceContext, meta: RequestMeta, user: UserRow, streamId: number): Promise<void> {
  const viewer = await narrowViewer(ctx.db, user);
  const rows = await sql<{ id: number }>`
    SELECT m.id FROM messages m WHERE m.stream_id = ${streamId} AND ${unreadSql(viewer)} ORDER BY m.id`.execute(ctx.db);
  if (rows.rows.length === 0) return;
  await changeFlags(ctx, meta, user, 'add', 'read', rows.rows.map((r) => r.id));
}
