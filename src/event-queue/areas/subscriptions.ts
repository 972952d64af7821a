import type { DataOf } from '../../domain/events.js';
import type { Db } from '../../db/database.js';
import type { StoredEvent } from '../../eventstore/types.js';
import { Role, isAdminRole } from '../../domain/roles.js';
import { formatStream, formatSubscription, weeklyTraffic, type SubscriptionRow } from '../../read/channels.js';
import { canSeeStreamMetadata, canSeeSubscribers, type StreamRow } from '../../visibility.js';
import { peerGroups, type PeerGroup } from '../peer-groups.js';
import { registerRunTranslator } from '../translators.js';
import type { ClientEvent, Recipient } from '../types.js';

/**
 * Subscription changes reach queues one request at a time, grouped as the real server groups them
 * (bulk_add_subscriptions / bulk_remove_subscriptions in zerver/actions/streams.py): each changed
 * user gets one `subscription` add (remove) event with all their channels of the request, then the
 * peers get peer_add (peer_remove) events combined by peer-groups.ts. The log keeps one
 * UserSubscribed / UserUnsubscribed per (user, channel); a request's events are one run.
 */

const viewerOf = (r: Recipient) => ({ user_id: r.user.id, role: r.user.role, realm_id: r.realm.id });
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface RunChanges {
  /** Channels the run changed, in the order it first changed them. */
  streams: StreamRow[];
  /** Channel id → users it gained (lost). */
  altered: Map<number, Set<number>>;
  /** User id → their changed channel ids, in log order. */
  byUser: Map<number, number[]>;
  /** Channel id → active subscribers after the run (accounts of any state: for access checks). */
  subscribed: Map<number, Set<number>>;
  /** Channel id → subscribers with active accounts after the run, sorted (subscriber lists). */
  listed: Map<number, number[]>;
  traffic: Map<number, number | null>;
}

/**
 * What a run changed, over the read tables as they stand. The run's own rows are laid over them,
 * so the answer does not depend on whether the fold has reached the run's last event yet.
 */
async function loadRun(db: Db, run: readonly StoredEvent[], joined: boolean): Promise<RunChanges | null> {
  const altered = new Map<number, Set<number>>();
  const byUser = new Map<number, number[]>();
  for (const event of run) {
    const d = event.data as DataOf<'UserSubscribed'> | DataOf<'UserUnsubscribed'>;
    let users = altered.get(d.stream_id);
    if (!users) altered.set(d.stream_id, (users = new Set()));
    if (users.has(d.user_id)) continue;
    users.add(d.user_id);
    let mine = byUser.get(d.user_id);
    if (!mine) byUser.set(d.user_id, (mine = []));
    mine.push(d.stream_id);
  }
  const ids = [...altered.keys()];
  const rows = new Map((await db.selectFrom('streams').selectAll().where('id', 'in', ids).execute()).map((s) => [s.id, s]));
  const streams = ids.filter((id) => rows.has(id)).map((id) => rows.get(id)!);
  if (streams.length === 0) return null;
  for (const id of ids) if (!rows.has(id)) altered.delete(id);
  for (const [user, mine] of byUser) {
    const kept = mine.filter((id) => rows.has(id));
    if (kept.length > 0) byUser.set(user, kept);
    else byUser.delete(user);
  }
  const subs = await db
    .selectFrom('subscriptions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.stream_id', 's.user_id', 'u.is_active'])
    .where('s.stream_id', 'in', [...altered.keys()])
    .where('s.active', '=', true)
    .execute();
  const changedUsers = await db.selectFrom('users').select(['id', 'is_active']).where('id', 'in', [...byUser.keys()]).execute();
  const activeAccount = new Map<number, boolean>([...subs.map((s) => [s.user_id, s.is_active] as const), ...changedUsers.map((u) => [u.id, u.is_active] as const)]);
  const subscribed = new Map<number, Set<number>>([...altered.keys()].map((id) => [id, new Set<number>()]));
  for (const s of subs) subscribed.get(s.stream_id)!.add(s.user_id);
  for (const [id, users] of altered) for (const user of users) joined ? subscribed.get(id)!.add(user) : subscribed.get(id)!.delete(user);
  const listed = new Map<number, number[]>();
  for (const [id, users] of subscribed) listed.set(id, [...users].filter((u) => activeAccount.get(u)).sort((a, b) => a - b));
  return { streams, altered, byUser, subscribed, listed, traffic: await weeklyTraffic(db, streams, nowSeconds()) };
}

/** peer-groups.ts over the run: which channels have a guest among their subscribers after it. */
async function groupsOf(db: Db, changes: RunChanges): Promise<PeerGroup[]> {
  const everyone = [...new Set([...changes.listed.values()].flat())];
  const guests = everyone.length === 0
    ? new Set<number>()
    : new Set((await db.selectFrom('users').select('id').where('id', 'in', everyone).where('role', '=', Role.GUEST).execute()).map((u) => u.id));
  const streams = changes.streams.map((s) => ({
    id: s.id,
    invite_only: s.invite_only,
    is_web_public: s.is_web_public,
    has_guest_subscriber: changes.listed.get(s.id)!.some((u) => guests.has(u)),
  }));
  return peerGroups(streams, changes.altered);
}

/**
 * The peer events `r` gets: those of groups they are not in, whose subscribers they may see. The
 * real server leaves a group's own users out; for a departure that leaves whoever left together
 * with others still listing those others among the subscribers of channels they can still see (its
 * own apply_event keeps them), so here they also hear of the others: a deliberate difference, so
 * that state folded from events always equals a fresh register.
 */
function peerEventsFor(r: Recipient, changes: RunChanges, groups: PeerGroup[], op: 'peer_add' | 'peer_remove'): ClientEvent[] {
  const viewer = viewerOf(r);
  const rows = new Map(changes.streams.map((s) => [s.id, s]));
  return groups.flatMap((g): ClientEvent[] => {
    const own = g.user_ids.includes(r.user.id);
    if (own && op === 'peer_add') return [];
    const user_ids = own ? g.user_ids.filter((u) => u !== r.user.id) : g.user_ids;
    if (user_ids.length === 0) return [];
    if (!g.stream_ids.every((id) => canSeeSubscribers(viewer, rows.get(id)!, changes.subscribed.get(id)!.has(r.user.id)))) return [];
    return [{ type: 'subscription', op, stream_ids: g.stream_ids, user_ids }];
  });
}

registerRunTranslator('UserSubscribed', async (run, db) => {
  const changes = await loadRun(db, run, true);
  if (!changes) return null;
  const groups = await groupsOf(db, changes);
  const rows = new Map(changes.streams.map((s) => [s.id, s]));
  const colors = new Map(run.map((e) => {
    const d = e.data as DataOf<'UserSubscribed'>;
    return [`${d.user_id}:${d.stream_id}`, d.color] as const;
  }));
  const current = new Map(
    (await db.selectFrom('subscriptions').selectAll().where('stream_id', 'in', [...rows.keys()]).where('user_id', 'in', [...changes.byUser.keys()]).execute())
      .map((s) => [`${s.user_id}:${s.stream_id}`, s]),
  );
  const subscriptionOf = (userId: number, streamId: number): SubscriptionRow => {
    const row = current.get(`${userId}:${streamId}`);
    const color = row?.color ?? colors.get(`${userId}:${streamId}`)!;
    return {
      ...(row ?? {
        user_id: userId, stream_id: streamId, is_muted: false, pin_to_top: false, desktop_notifications: null, email_notifications: null,
        push_notifications: null, audible_notifications: null, wildcard_mentions_notify: null, version: 1,
      }),
      active: true,
      color,
    } as SubscriptionRow;
  };
  return {
    audience: 'realm',
    maxPerRecipient: changes.streams.length + 1 + groups.length,
    forUser: (r) => {
      const events: ClientEvent[] = [];
      const mine = changes.byUser.get(r.user.id);
      if (mine) {
        const viewer = viewerOf(r);
        // Channels the user could not see before arrive first, one event each.
        for (const id of mine) {
          const row = rows.get(id)!;
          if (!canSeeStreamMetadata(viewer, row, false)) events.push({ type: 'stream', op: 'create', streams: [formatStream(row, changes.traffic.get(id) ?? null)] });
        }
        events.push({
          type: 'subscription',
          op: 'add',
          subscriptions: mine.map((id) => formatSubscription(
            rows.get(id)!,
            subscriptionOf(r.user.id, id),
            changes.traffic.get(id) ?? null,
            r.queue.include_subscribers ? changes.listed.get(id) : undefined,
          )),
        });
      }
      events.push(...peerEventsFor(r, changes, groups, 'peer_add'));
      return events;
    },
  };
});

registerRunTranslator('UserUnsubscribed', async (run, db) => {
  const changes = await loadRun(db, run, false);
  if (!changes) return null;
  const groups = await groupsOf(db, changes);
  const rows = new Map(changes.streams.map((s) => [s.id, s]));
  return {
    audience: 'realm',
    maxPerRecipient: 2 + groups.length,
    forUser: (r) => {
      const events: ClientEvent[] = [];
      const mine = changes.byUser.get(r.user.id);
      if (mine) {
        events.push({ type: 'subscription', op: 'remove', subscriptions: mine.map((id) => ({ stream_id: id, name: rows.get(id)!.name })) });
        // Leaving private channels (not as an administrator) loses sight of them: one event for all.
        const viewer = viewerOf(r);
        const lost = isAdminRole(r.user.role) ? [] : mine.map((id) => rows.get(id)!).filter((row) => !canSeeStreamMetadata(viewer, row, false));
        if (lost.length > 0) {
          events.push({ type: 'stream', op: 'delete', streams: lost.map((row) => formatStream(row, changes.traffic.get(row.id) ?? null)), stream_ids: lost.map((row) => row.id) });
        }
      }
      events.push(...peerEventsFor(r, changes, groups, 'peer_remove'));
      return events;
    },
  };
});
