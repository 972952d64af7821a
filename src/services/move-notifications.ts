import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { receivedSql } from '../read/narrow.js';
import { channelNarrowUrl, encodeHashComponent } from '../markdown/urls.js';
import { streamHistoryIsProtected, type StreamRow } from '../visibility.js';
import { silentMention } from './channel-announcements.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { sendMessage } from './messages.js';
import { INTERNAL_CLIENT, SystemBot, getSystemBot } from './system-bots.js';

/**
 * The notices Notification Bot posts after a topic or channel move, as the real server does: that a
 * topic was resolved or unresolved, and breadcrumbs in the new topic (on by default) and the old one
 * (off by default) saying what moved where and who moved it. Each notice arrives read for the mover.
 */

/** A committed move, as the edit saw it. */
export interface MoveOutcome {
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

const topicLink = (stream: StreamRow, topic: string) => `#**${stream.name}>${topic}**`;

/** Whether the actor can see any message of the topic apart from `except` (where history is protected, only what they received). */
async function topicHasVisibleMessages(db: Db, actor: UserRow, stream: StreamRow, topic: string, except: number[]): Promise<boolean> {
  const { rows } = await sql<{ id: number }>`
    SELECT m.id FROM messages m
    WHERE m.stream_id = ${stream.id} AND lower(m.topic) = ${topic.toLowerCase()}
      ${except.length > 0 ? sql`AND m.id <> ALL(${except}::int[])` : sql``}
      ${streamHistoryIsProtected(stream) ? sql`AND ${receivedSql(actor.id)}` : sql``}
    LIMIT 1`.execute(db);
  return rows.length > 0;
}

export async function sendMoveNotices(ctx: ServiceContext, meta: RequestMeta, actor: UserRow, realm: RealmRow, move: MoveOutcome, notices: MoveNotices): Promise<void> {
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
  const post = async (stream: StreamRow, topic: string, content: string): Promise<number> =>
    (await sendMessage(ctx, { ...meta, client: INTERNAL_CLIENT }, bot, realm, { type: 'stream', to: stream.id, topic, content, read_for_user_ids: [actor.id] })).id;

  let resolveNoticeId: number | null = null;
  if (resolved !== null && !streamChanged && !move.contentChanged) {
    resolveNoticeId = await post(from, move.toTopic, `${user} has marked this topic as ${resolved}.`);
  }
  const movedAll = move.propagateMode === 'change_all'
    || !(await topicHasVisibleMessages(ctx.db, actor, from, move.fromTopic, []));
  const count = move.movedIds.length;
  if (notices.newThread && (streamChanged || (topicChanged && resolved === null))) {
    const except = resolveNoticeId === null ? move.movedIds : [...move.movedIds, resolveNoticeId];
    const preexisting = await topicHasVisibleMessages(ctx.db, actor, to, move.toTopic, except);
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
