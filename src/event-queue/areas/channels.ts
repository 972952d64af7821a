import type { DataOf } from '../../domain/events.js';
import type { Db } from '../../db/database.js';
import { registerTranslator } from '../translators.js';
import { streamRowFromCreated } from '../../read/channels.js';
import { withInheritedNotificationSettings } from '../stream-notification-defaults.js';
import { registerSection } from '../sections.js';
import { Role } from '../../domain/roles.js';
import { StreamPostPolicy } from '../../domain/channels/decider.js';
import {
  formatStream,
  formatSubscription,
  gatherSubscriptions,
  getStreamById,
  listActiveStreams,
  subscribersByStream,
  weeklyTraffic,
} from '../../read/channels.js';
import { canSeeStreamMetadata, canSeeSubscribers, type StreamRow } from '../../visibility.js';
import type { ClientEvent, PreparedEvent, Recipient } from '../types.js';

const viewerOf = (r: Recipient) => ({ user_id: r.user.id, role: r.user.role, realm_id: r.realm.id });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Users with any subscription row (active or not) and the active ones, for audience checks. */
async function subscriptionSets(db: Db, streamId: number): Promise<{ active: Set<number>; ever: Set<number> }> {
  const rows = await db.selectFrom('subscriptions').select(['user_id', 'active']).where('stream_id', '=', streamId).execute();
  return { active: new Set(rows.filter((r) => r.active).map((r) => r.user_id)), ever: new Set(rows.map((r) => r.user_id)) };
}

async function defaultStreams(db: Db, realmId: number): Promise<Record<string, unknown>[]> {
  const streams = (await listActiveStreams(db, realmId)).filter((s) => s.is_default);
  return streams.map((s) => {
    const { stream_weekly_traffic: _traffic, ...rest } = formatStream(s, null);
    return rest;
  });
}

/** `default_streams` carries the whole list; guests have none. */
async function defaultStreamsEvent(db: Db, realmId: number): Promise<PreparedEvent> {
  const list = await defaultStreams(db, realmId);
  return {
    audience: 'realm',
    forUser: (r) => (r.user.role === Role.GUEST ? [] : [{ type: 'default_streams', default_streams: list }]),
  };
}

function combine(...parts: Array<PreparedEvent | null>): PreparedEvent | null {
  const present = parts.filter((p): p is PreparedEvent => p !== null);
  if (present.length === 0) return null;
  if (present.length === 1) return present[0]!;
  const realmWide = present.some((p) => p.audience === 'realm');
  const audience = realmWide ? 'realm' as const : new Set(present.flatMap((p) => [...(p.audience as ReadonlySet<number>)]));
  return {
    audience,
    forUser: (r) =>
      present.flatMap((p) => (p.audience === 'realm' || p.audience.has(r.user.id) ? p.forUser(r) : [])),
  };
}


// A new channel is announced to everyone who may see it without being subscribed; new subscribers
// of a private channel learn of it from their own subscription (subscriptions.ts).
registerTranslator('StreamCreated', async (event, db) => {
  const d = event.data as DataOf<'StreamCreated'>;
  const row = streamRowFromCreated(d);
  const create: PreparedEvent = {
    audience: 'realm',
    forUser: (r) => (canSeeStreamMetadata(viewerOf(r), row, false) ? [{ type: 'stream', op: 'create', streams: [formatStream(row, null)] }] : []),
  };
  return combine(create, d.is_default ? await defaultStreamsEvent(db, d.realm_id) : null);
});

registerTranslator('StreamPropertyChanged', async (event, db) => {
  const d = event.data as DataOf<'StreamPropertyChanged'>;
  const row = await getStreamById(db, d.stream_id);
  if (!row) return null;
  if (d.property === 'is_default') return defaultStreamsEvent(db, row.realm_id);
  const subs = await subscriptionSets(db, row.id);
  const name = d.property === 'name' ? String(d.old_value ?? row.name) : row.name;
  const updates: ClientEvent[] = [{ type: 'stream', op: 'update', stream_id: row.id, name, property: d.property, value: d.value, ...(d.extra ?? {}) }];
  if (d.property === 'stream_post_policy') {
    // Legacy clients still read is_announcement_only.
    updates.push({ type: 'stream', op: 'update', stream_id: row.id, name, property: 'is_announcement_only', value: d.value === StreamPostPolicy.ADMINS });
  }
  if (!d.access) {
    return {
      audience: 'realm',
      forUser: (r) => (canSeeStreamMetadata(viewerOf(r), row, subs.active.has(r.user.id)) ? updates : []),
    };
  }
  const before = { ...row, ...d.access.before };
  const after = { ...row, ...d.access.after };
  const traffic = (await weeklyTraffic(db, [row], nowSeconds())).get(row.id) ?? null;
  const subscribers = (await subscribersByStream(db, [row.id])).get(row.id) ?? [];
  return {
    audience: 'realm',
    forUser: (r) => {
      const subscribed = subs.active.has(r.user.id);
      const saw = canSeeStreamMetadata(viewerOf(r), before, subscribed);
      const sees = canSeeStreamMetadata(viewerOf(r), after, subscribed);
      if (saw && sees) return updates;
      if (sees) {
        // A channel that comes into view arrives like a new one, then with its current subscribers.
        const events: ClientEvent[] = [{ type: 'stream', op: 'create', streams: [formatStream(row, traffic)] }];
        if (subscribers.length > 0 && canSeeSubscribers(viewerOf(r), after, subscribed)) {
          events.push({ type: 'subscription', op: 'peer_add', stream_ids: [row.id], user_ids: subscribers });
        }
        return events;
      }
      if (saw) return [{ type: 'stream', op: 'delete', streams: [formatStream(row, traffic)], stream_ids: [row.id] }];
      return [];
    },
  };
});

registerTranslator('StreamArchived', async (event, db) => {
  const d = event.data as DataOf<'StreamArchived'>;
  const row = await getStreamById(db, d.stream_id);
  if (!row) return null;
  const subs = await subscriptionSets(db, row.id);
  const live = { ...row, deactivated: false };
  const deleted: ClientEvent = { type: 'stream', op: 'delete', streams: [formatStream(live, null)], stream_ids: [row.id] };
  const del: PreparedEvent = {
    audience: 'realm',
    forUser: (r) => (canSeeStreamMetadata(viewerOf(r), live, subs.ever.has(r.user.id)) ? [deleted] : []),
  };
  return combine(del, d.was_default ? await defaultStreamsEvent(db, row.realm_id) : null);
});

registerTranslator('SubscriptionPropertyChanged', async (event) => {
  const d = event.data as DataOf<'SubscriptionPropertyChanged'>;
  const events: ClientEvent[] = [];
  if (d.property === 'is_muted') {
    // The deprecated inverse property still gets its own event first, as the real server does.
    events.push({ type: 'subscription', op: 'update', stream_id: d.stream_id, property: 'in_home_view', value: !d.value });
  }
  events.push({ type: 'subscription', op: 'update', stream_id: d.stream_id, property: d.property, value: d.value });
  return { audience: new Set([d.user_id]), forUser: () => events };
});

registerTranslator('UserTopicPolicySet', async (event) => {
  const d = event.data as DataOf<'UserTopicPolicySet'>;
  const out: ClientEvent = {
    type: 'user_topic',
    stream_id: d.stream_id,
    topic_name: d.topic,
    last_updated: d.last_updated,
    visibility_policy: d.visibility_policy,
  };
  return { audience: new Set([d.user_id]), forUser: () => [out] };
});

registerSection('subscription', async ({ trx, user, realm, options }) => {
  const viewer = { user_id: user.id, role: user.role, realm_id: realm.id };
  const lists = await gatherSubscriptions(trx as Db, viewer, options.include_subscribers, nowSeconds());
  if (!options.client_capabilities.notification_settings_null) withInheritedNotificationSettings([...lists.subscriptions, ...lists.unsubscribed], user);
  return { ...lists };
});

registerSection('stream', async ({ trx, user, realm }) => {
  const db = trx as Db;
  const viewer = { user_id: user.id, role: user.role, realm_id: realm.id };
  const streams = await listActiveStreams(db, realm.id);
  const mine = new Set((await db.selectFrom('subscriptions').select('stream_id').where('user_id', '=', user.id).where('active', '=', true).execute()).map((s) => s.stream_id));
  const visible = streams.filter((s) => canSeeStreamMetadata(viewer, s, mine.has(s.id)));
  const traffic = await weeklyTraffic(db, visible, nowSeconds());
  return { streams: visible.map((s) => formatStream(s, traffic.get(s.id) ?? null)) };
});

registerSection('default_streams', async ({ trx, user, realm }) => ({
  realm_default_streams: user.role === Role.GUEST ? [] : await defaultStreams(trx as Db, realm.id),
}));

registerSection('user_topic', async ({ trx, user }) => {
  const rows = await (trx as Db)
    .selectFrom('user_topics as t')
    .select(['t.stream_id', 't.topic', 't.last_updated', 't.visibility_policy'])
    .where('t.user_id', '=', user.id)
    .orderBy('t.last_updated')
    .execute();
  return {
    user_topics: rows.map((r) => ({
      stream_id: r.stream_id,
      topic_name: r.topic,
      last_updated: Number(r.last_updated),
      visibility_policy: r.visibility_policy,
    })),
  };
});
