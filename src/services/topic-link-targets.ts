// Topic links point at a message of the topic (`#**channel>topic**` → `…/topic/<topic>/with/<id>`), as the real
// server's do: the topic's first message the sender can read, found before rendering for every topic the content
// may link to. A topic without such a message gets a plain topic link.
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { Role } from '../domain/roles.js';
import { topicLinkKey, type RenderContext } from '../markdown/index.js';

// A superset of the topic links the renderer will find (the renderer also checks what comes before "#**").
const possibleTopicLink = /#\*\*([^*>]+)>([^*]*)\*\*/g;
/** Topic links a message may make at most that are looked up (the rest stay plain topic links). */
const MAX_LOOKUPS = 20;

interface Sender {
  id: number;
  role: number;
}

/** The render context with the topic link targets of `content` for `sender`, or the context as it is. */
export async function withTopicLinkTargets(db: Db, context: RenderContext, sender: Sender, content: string): Promise<RenderContext> {
  if (!content.includes('#**')) return context;
  const wanted = new Map<string, { channelId: number; topic: string }>();
  for (const match of content.matchAll(possibleTopicLink)) {
    const channel = context.channelByName(match[1]!);
    if (!channel) continue;
    // "topic@123" is a message link, which points at its message; its topic is looked up like any other.
    const topic = match[2]!.replace(/@\d+$/, '');
    wanted.set(topicLinkKey(channel.id, topic), { channelId: channel.id, topic });
    if (wanted.size >= MAX_LOOKUPS) break;
  }
  if (wanted.size === 0) return context;
  const targets = new Map<string, number>();
  await Promise.all(
    [...wanted].map(async ([key, { channelId, topic }]) => {
      const first = await firstReadableMessage(db, sender, channelId, topic);
      if (first !== undefined) targets.set(key, first);
    }),
  );
  return targets.size === 0 ? context : { ...context, topicLinkTargets: targets };
}

/**
 * The topic's first message the sender can read: any of it in a channel whose history its readers see (a public
 * channel, except to a guest who is not subscribed; a private one the sender is subscribed to), else the first
 * one the sender received.
 */
async function firstReadableMessage(db: Db, sender: Sender, channelId: number, topic: string): Promise<number | undefined> {
  const guest = sender.role === Role.GUEST;
  const { rows } = await sql<{ id: number | string | null }>`
    WITH channel AS (
      SELECT st.invite_only, st.history_public_to_subscribers,
        EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = ${sender.id} AND s.stream_id = st.id AND s.active) AS subscribed
      FROM streams st WHERE st.id = ${channelId}
    )
    SELECT min(m.id) AS id FROM messages m, channel c
    WHERE m.stream_id = ${channelId} AND lower(m.topic) = lower(${topic})
      AND (
        (NOT c.invite_only AND (c.subscribed OR NOT ${guest}))
        OR (c.invite_only AND c.subscribed AND c.history_public_to_subscribers)
        OR m.sender_id = ${sender.id}
        OR EXISTS (SELECT 1 FROM message_reception_spans sp WHERE sp.user_id = ${sender.id} AND sp.stream_id = m.stream_id
          AND sp.from_id <= m.id AND (sp.to_id IS NULL OR sp.to_id >= m.id))
      )`.execute(db);
  const id = rows[0]?.id;
  return id === null || id === undefined ? undefined : Number(id);
}
