import { registerApplier, type State } from './registry.js';

/**
 * How a client folds channel events into its /register state (after the real server's
 * apply_event). Whether the queue asked for subscribers shows in the state: entries carry
 * `subscribers` only then.
 */
const LISTS = ['subscriptions', 'unsubscribed', 'never_subscribed'] as const;

function hasSubscriberData(state: State): boolean {
  return LISTS.some((l) => (state[l] ?? []).some((s: any) => Array.isArray(s.subscribers)));
}

function without(list: any[] | undefined, ids: Set<number>): any[] | undefined {
  return list?.filter((s) => !ids.has(s.stream_id));
}

registerApplier('stream', (state, event, ctx) => {
  if (event.op === 'create') {
    // A state whose lists are all empty does not show whether the queue asked for subscribers.
    const withSubscribers = ctx.includeSubscribers === true || hasSubscriberData(state);
    for (const stream of event.streams) {
      if (state.never_subscribed && !LISTS.some((l) => state[l].some((s: any) => s.stream_id === stream.stream_id))) {
        state.never_subscribed.push(withSubscribers ? { ...stream, subscribers: [] } : { ...stream });
      }
      if (state.streams && !state.streams.some((s: any) => s.stream_id === stream.stream_id)) state.streams.push({ ...stream });
    }
    return;
  }
  if (event.op === 'delete') {
    const ids = new Set<number>(event.streams.map((s: any) => s.stream_id));
    for (const key of [...LISTS, 'streams'] as const) if (state[key]) state[key] = without(state[key], ids);
    return;
  }
  if (event.op !== 'update') throw new Error(`stream op ${event.op}`);
  const apply = (obj: any, isStreamList: boolean) => {
    if (obj.stream_id !== event.stream_id) return;
    if (isStreamList && !(event.property in obj)) return;
    obj[event.property] = event.value;
    if (event.property === 'description') obj.rendered_description = event.rendered_description;
    if (event.history_public_to_subscribers !== undefined) obj.history_public_to_subscribers = event.history_public_to_subscribers;
    if (event.is_web_public !== undefined) obj.is_web_public = event.is_web_public;
    if (event.invite_only !== undefined) obj.invite_only = event.invite_only;
  };
  for (const list of LISTS) for (const obj of state[list] ?? []) apply(obj, false);
  for (const obj of state.streams ?? []) apply(obj, true);
  for (const obj of state.realm_default_streams ?? []) apply(obj, true);
});

registerApplier('subscription', (state, event, ctx) => {
  switch (event.op) {
    case 'add': {
      const ids = new Set<number>(event.subscriptions.map((s: any) => s.stream_id));
      state.unsubscribed = without(state.unsubscribed, ids);
      state.never_subscribed = without(state.never_subscribed, ids);
      for (const sub of event.subscriptions) {
        if (!state.subscriptions.some((s: any) => s.stream_id === sub.stream_id)) state.subscriptions.push({ ...sub });
      }
      return;
    }
    case 'remove': {
      const ids = new Set<number>(event.subscriptions.map((s: any) => s.stream_id));
      const removed = state.subscriptions.filter((s: any) => ids.has(s.stream_id));
      for (const sub of removed) if (sub.subscribers) sub.subscribers = sub.subscribers.filter((u: number) => u !== ctx.userId);
      state.subscriptions = without(state.subscriptions, ids);
      state.unsubscribed.push(...removed);
      return;
    }
    case 'update':
      for (const sub of state.subscriptions) if (sub.stream_id === event.stream_id) sub[event.property] = event.value;
      return;
    case 'peer_add':
    case 'peer_remove': {
      const streams = new Set<number>(event.stream_ids);
      const users = new Set<number>(event.user_ids);
      for (const list of LISTS) {
        for (const sub of state[list] ?? []) {
          if (!streams.has(sub.stream_id) || !sub.subscribers) continue;
          const next = new Set<number>(sub.subscribers);
          for (const u of users) event.op === 'peer_add' ? next.add(u) : next.delete(u);
          sub.subscribers = [...next].sort((a, b) => a - b);
        }
      }
      return;
    }
    default:
      throw new Error(`subscription op ${event.op}`);
  }
});

registerApplier('default_streams', (state, event) => {
  if (state.realm_default_streams) state.realm_default_streams = event.default_streams;
});

registerApplier('user_topic', (state, event) => {
  if (!state.user_topics) return;
  const topic = String(event.topic_name).toLowerCase();
  state.user_topics = state.user_topics.filter((t: any) => !(t.stream_id === event.stream_id && t.topic_name.toLowerCase() === topic));
  if (event.visibility_policy !== 0) {
    state.user_topics.push({
      stream_id: event.stream_id,
      topic_name: event.topic_name,
      last_updated: event.last_updated,
      visibility_policy: event.visibility_policy,
    });
  }
});

// The deprecated muted_topics event carries the whole new list.
registerApplier('muted_topics', (state, event) => {
  if (state.muted_topics) state.muted_topics = event.muted_topics;
});
