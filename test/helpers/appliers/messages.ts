import { registerApplier, type State } from './registry.js';

// How a client folds message events into the message sections of /register:
// max_message_id, unread_msgs, recent_private_conversations and starred_messages.

type Unread = {
  pms: Array<{ other_user_id: number; sender_id: number; unread_message_ids: number[] }>;
  streams: Array<{ stream_id: number; topic: string; unread_message_ids: number[] }>;
  huddles: Array<{ user_ids_string: string; unread_message_ids: number[] }>;
  mentions: number[];
  count: number;
};

function addUnread(u: Unread, id: number, where: { stream_id?: number; topic?: string; user_ids?: number[] }, self: number, mentioned: boolean): void {
  if (where.stream_id !== undefined) {
    let entry = u.streams.find((s) => s.stream_id === where.stream_id && s.topic === where.topic);
    if (!entry) u.streams.push((entry = { stream_id: where.stream_id, topic: where.topic!, unread_message_ids: [] }));
    entry.unread_message_ids = [...new Set([...entry.unread_message_ids, id])].sort((a, b) => a - b);
  } else {
    const others = (where.user_ids ?? []).filter((x) => x !== self);
    if (others.length <= 1) {
      const other = others[0] ?? self;
      let entry = u.pms.find((p) => p.other_user_id === other);
      if (!entry) u.pms.push((entry = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
      entry.unread_message_ids = [...new Set([...entry.unread_message_ids, id])].sort((a, b) => a - b);
    } else {
      const key = [...new Set([...others, self])].sort((a, b) => a - b).join(',');
      let entry = u.huddles.find((h) => h.user_ids_string === key);
      if (!entry) u.huddles.push((entry = { user_ids_string: key, unread_message_ids: [] }));
      entry.unread_message_ids = [...new Set([...entry.unread_message_ids, id])].sort((a, b) => a - b);
    }
  }
  if (mentioned && !u.mentions.includes(id)) u.mentions.push(id);
  u.count += 1;
}

/** Removes ids from every unread bucket; returns how many were unread. */
function removeUnread(u: Unread, ids: number[]): number {
  const gone = new Set(ids);
  let removed = 0;
  const strip = <T extends { unread_message_ids: number[] }>(list: T[]): T[] => {
    for (const entry of list) {
      const before = entry.unread_message_ids.length;
      entry.unread_message_ids = entry.unread_message_ids.filter((x) => !gone.has(x));
      removed += before - entry.unread_message_ids.length;
    }
    return list.filter((e) => e.unread_message_ids.length > 0);
  };
  u.pms = strip(u.pms);
  u.streams = strip(u.streams);
  u.huddles = strip(u.huddles);
  u.mentions = u.mentions.filter((x) => !gone.has(x));
  u.count -= removed;
  return removed;
}

registerApplier('message', (state: State, event, ctx) => {
  const m = event.message;
  // Clients set a channel's first_message_id from its first message; no stream event says so.
  if (m.type === 'stream') {
    for (const list of [state.subscriptions, state.unsubscribed, state.never_subscribed, state.streams]) {
      const stream = (list ?? []).find((s: { stream_id: number }) => s.stream_id === m.stream_id);
      if (stream && 'first_message_id' in stream && (stream.first_message_id === null || stream.first_message_id > m.id)) stream.first_message_id = m.id;
    }
  }
  if ('max_message_id' in state) state.max_message_id = Math.max(state.max_message_id, m.id);
  const flags: string[] = event.flags ?? [];
  if (state.unread_msgs && !flags.includes('read')) {
    const mentioned = flags.some((f) => ['mentioned', 'stream_wildcard_mentioned', 'topic_wildcard_mentioned'].includes(f));
    addUnread(state.unread_msgs, m.id, m.type === 'stream'
      ? { stream_id: m.stream_id, topic: m.subject }
      : { user_ids: m.display_recipient.map((r: { id: number }) => r.id) }, ctx.userId, mentioned);
  }
  if (state.recent_private_conversations && m.type === 'private') {
    const others = m.display_recipient.map((r: { id: number }) => r.id).filter((id: number) => id !== ctx.userId).sort((a: number, b: number) => a - b);
    const list = state.recent_private_conversations as Array<{ max_message_id: number; user_ids: number[] }>;
    const existing = list.find((c) => c.user_ids.join(',') === others.join(','));
    if (existing) existing.max_message_id = Math.max(existing.max_message_id, m.id);
    else list.push({ max_message_id: m.id, user_ids: others });
    list.sort((a, b) => b.max_message_id - a.max_message_id);
  }
  if (state.starred_messages && flags.includes('starred')) state.starred_messages.push(m.id);
});

registerApplier('update_message_flags', (state, event, ctx) => {
  const ids: number[] = event.messages;
  if (event.flag === 'starred' && state.starred_messages) {
    const set = new Set<number>(state.starred_messages);
    for (const id of ids) event.op === 'add' ? set.add(id) : set.delete(id);
    state.starred_messages = [...set].sort((a, b) => a - b);
  }
  if (event.flag !== 'read' || !state.unread_msgs) return;
  // Marking everything read lists no messages: a client empties its unread state.
  if (event.all) {
    state.unread_msgs = { pms: [], streams: [], huddles: [], mentions: [], count: 0, old_unreads_missing: false };
    return;
  }
  if (event.op === 'add') {
    removeUnread(state.unread_msgs, ids);
    return;
  }
  for (const id of ids) {
    const d = event.message_details[String(id)];
    addUnread(state.unread_msgs, id, d.type === 'stream' ? { stream_id: d.stream_id, topic: d.topic } : { user_ids: d.user_ids }, ctx.userId, !!d.mentioned);
    if (d.type === 'stream' && d.unmuted_stream_msg === false) state.unread_msgs.count -= 1;
  }
});

registerApplier('delete_message', (state, event) => {
  const ids: number[] = event.message_ids ?? [event.message_id];
  if (state.unread_msgs) removeUnread(state.unread_msgs, ids);
  if (state.starred_messages) state.starred_messages = state.starred_messages.filter((id: number) => !ids.includes(id));
});

registerApplier('update_message', (state, event) => {
  const u: Unread | undefined = state.unread_msgs;
  if (!u || (event.subject === undefined && event.new_stream_id === undefined)) return;
  const moved = new Set<number>(event.message_ids);
  const newStream = event.new_stream_id ?? event.stream_id;
  const newTopic = event.subject ?? event.orig_subject;
  const ids: number[] = [];
  for (const entry of u.streams) {
    if (entry.stream_id !== event.stream_id || entry.topic !== event.orig_subject) continue;
    for (const id of entry.unread_message_ids) if (moved.has(id)) ids.push(id);
    entry.unread_message_ids = entry.unread_message_ids.filter((id) => !moved.has(id));
  }
  u.streams = u.streams.filter((e) => e.unread_message_ids.length > 0);
  if (ids.length === 0) return;
  let target = u.streams.find((s) => s.stream_id === newStream && s.topic === newTopic);
  if (!target) u.streams.push((target = { stream_id: newStream, topic: newTopic, unread_message_ids: [] }));
  target.unread_message_ids = [...new Set([...target.unread_message_ids, ...ids])].sort((a, b) => a - b);
});

// Reactions are not part of /register state.
registerApplier('reaction', () => undefined);
