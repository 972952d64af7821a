import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { channelNarrowUrl, encodeHashComponent } from '../markdown/urls.js';
import type { StreamRow } from '../visibility.js';
import { topicHasMessages } from './move-topic-policies.js';
import { silentMention } from '../domain/channels/notices.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { deleteMessageAsServer, sendMessage } from './messages.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';

/**
 * The notices Notification Bot posts after a topic or channel move, as the real server does: that a
 * topic was resolved or unresolved, and breadcrumbs in the new topic (on by default) and the old one
 * (off by default) saying what moved where and who moved it. Each notice arrives read for the mover.
 */

/** A committed move, as the edit saw it. */
export interface MoveOutcome {
  /** the message the request edited: its key seals the move's topic names */
  messageId: number;
  fromStreamId: number;
  fromTopic: string;
  toStreamId: number;
  toTopic: string;
  /** the topic as requested, stripped but not cut to length: resolving compares it whole */
  requestedTopic: string | null;
  movedIds: number[];
  propagateMode: 'change_one' | 'change_later' | 'change_all';
  contentChanged: boolean;
}

export interface MoveNotices {
  oldThread: boolean;
  newThread: boolean;
}

export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Whether a rename marks the topic resolved ("✔ " + the old name) or unresolved (the reverse). */
export function resolution(fromTopic: string, requested: string, toTopic: string): 'resolved' | 'unresolved' | null {
  if (toTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !fromTopic.startsWith(RESOLVED_TOPIC_PREFIX)
    && requested.slice(RESOLVED_TOPIC_PREFIX.length) === fromTopic) return 'resolved';
  // The real server strips every leading "✔" and space of the old name (Python's lstrip).
  if (fromTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !toTopic.startsWith(RESOLVED_TOPIC_PREFIX)
    && fromTopic.replace(/^[✔ ]+/u, '') === toTopic) return 'unresolved';
  return null;
}

const RESOLVE_NOTICE = /^@_\*\*[^*]+\|\d+\*\* has marked this topic as (?:un)?resolved\.$/u;

/**
 * Resolving a topic and undoing it within the grace period takes back the first notice rather than
 * adding a second: when the topic's last message is Notification Bot's (un)resolve notice, younger
 * than the grace period, it is deleted and nothing is sent. Only Notification Bot writes as itself,
 * so its sender and wording mark such a notice.
 */
async function tookBackRecentResolveNotice(ctx: ServiceContext, meta: RequestMeta, realm: RealmRow, bot: UserRow, stream: StreamRow, topic: string): Promise<boolean> {
  const grace = ctx.config.resolveTopicUndoGraceSeconds;
  if (grace <= 0) return false;
  const last = await ctx.db.selectFrom('messages').select(['id', 'sender_id', 'content', 'date_sent'])
    .where('stream_id', '=', stream.id)
    .where(sql<boolean>`lower(topic) = ${topic.toLowerCase()}`)
    .orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (!last || last.sender_id !== bot.id || !RESOLVE_NOTICE.test(last.content)) return false;
  if (Math.floor(meta.now.getTime() / 1000) - Number(last.date_sent) > grace) return false;
  await deleteMessageAsServer(ctx, meta, realm, last.id);
  return true;
}

/** Who took part in these messages: their senders and whoever reacted to them. */
async function participantsOf(db: Db, messageIds: number[]): Promise<Set<number>> {
  if (messageIds.length === 0) return new Set();
  const { rows } = await sql<{ user_id: number }>`
    SELECT sender_id AS user_id FROM messages WHERE id = ANY(${messageIds}::int[])
    UNION SELECT user_id FROM reactions WHERE message_id = ANY(${messageIds}::int[])`.execute(db);
  return new Set(rows.map((r) => Number(r.user_id)));
}

const topicLink = (stream: StreamRow, topic: string) => `#**${stream.name}>${topic}**`;

/** `movedAll`: the mover can see no message left in the old topic (see movedWholeTopic). */
export async function sendMoveNotices(ctx: ServiceContext, meta: RequestMeta, actor: UserRow, realm: RealmRow, move: MoveOutcome, notices: MoveNotices, movedAll: boolean): Promise<void> {
  const bot = await getSystemBot(ctx.db, realm, SystemBot.NOTIFICATION);
  if (!bot) return;
  const streams = await ctx.db.selectFrom('streams').selectAll().where('id', 'in', [move.fromStreamId, move.toStreamId]).execute();
  const from = streams.find((s) => s.id === move.fromStreamId);
  const to = streams.find((s) => s.id === move.toStreamId);
  if (!from || !to) return;
  const streamChanged = move.fromStreamId !== move.toStreamId;
  const topicChanged = move.fromTopic !== move.toTopic;
  const resolved = topicChanged && move.requestedTopic !== null ? resolution(move.fromTopic, move.requestedTopic, move.toTopic) : null;
  const user = silentMention(actor);
  const post = async (stream: StreamRow, topic: string, content: string, readFor = [actor.id]): Promise<number> =>
    (await sendMessage(ctx, { ...meta, client: INTERNAL_CLIENT }, bot, realm, { type: 'stream', to: stream.id, topic, content, read_for_user_ids: readFor })).id;

  let resolveNoticeId: number | null = null;
  if (resolved !== null && !streamChanged && !move.contentChanged && !(await tookBackRecentResolveNotice(ctx, meta, realm, bot, from, move.toTopic))) {
    // Unread only for the topic's participants in what moved (not the mover): the others need no nudge.
    const participants = await participantsOf(ctx.db, move.movedIds);
    const subscribers = await ctx.db.selectFrom('subscriptions').select('user_id').where('stream_id', '=', from.id).where('active', '=', true).execute();
    const readFor = [actor.id, ...subscribers.map((r) => r.user_id).filter((id) => !participants.has(id))];
    resolveNoticeId = await post(from, move.toTopic, `${user} has marked this topic as ${resolved}.`, readFor);
  }
  const count = move.movedIds.length;
  if (notices.newThread && (streamChanged || (topicChanged && resolved === null))) {
    const except = resolveNoticeId === null ? move.movedIds : [...move.movedIds, resolveNoticeId];
    const preexisting = await topicHasMessages(ctx.db, to, move.toTopic, except, actor.id);
    const old = topicLink(from, move.fromTopic);
    const link = `${realm.url}${channelNarrowUrl(to)}/topic/${encodeHashComponent(move.toTopic)}/near/${move.movedIds[0]}`;
    const content = !preexisting && movedAll
      ? `This topic was moved here from ${old} by ${user}.`
      : count === 1
        ? `[A message](${link}) was moved here from ${old} by ${user}.`
        : `${count} messages were moved here from ${old} by ${user}.`;
    await post(to, move.toTopic, content);
  }
  if (notices.oldThread) {
    const target = topicLink(to, move.toTopic);
    const content = movedAll
      ? `This topic was moved to ${target} by ${user}.`
      : count === 1
        ? `A message was moved from this topic to ${target} by ${user}.`
        : `${count} messages were moved from this topic to ${target} by ${user}.`;
    await post(from, move.fromTopic, content);
  }
}
