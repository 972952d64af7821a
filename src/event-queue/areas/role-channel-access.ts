import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import { formatStream, subscribersByStream, weeklyTraffic } from '../../read/channels.js';
import { canSeeStreamMetadata, canSeeSubscribers, type Viewer } from '../../visibility.js';
import { channelsAsOf } from '../channel-access-as-of.js';
import type { ClientEvent } from '../types.js';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * A role change moves which channels the user may see without being subscribed: administrators
 * see private channels, guests lose public ones. As the real server does (send_stream_events_for_role_update,
 * after the realm_user and user_group events), the user's own clients get one `stream` create for
 * the channels coming into view, then a `peer_add` with the subscribers of each of them, then one
 * `stream` delete for those going out of view. Moderators see what members see.
 *
 * Which channels move is decided as of the event (channelsAsOf); the channels' other properties
 * and subscriber lists are read now, as by the other channel translators: any later change to them
 * reaches the queue as its own event after this one, and folds to the same state.
 */
registerTranslator('UserRoleChanged', async (event, db) => {
  const d = event.data as DataOf<'UserRoleChanged'>;
  const realmId = event.metadata.realm_id;
  const before: Viewer = { user_id: d.user_id, role: d.old_role, realm_id: realmId };
  const after: Viewer = { user_id: d.user_id, role: d.role, realm_id: realmId };
  const channels = await channelsAsOf(db, realmId, d.user_id, event.position);
  const gained = channels.filter((c) => !canSeeStreamMetadata(before, c.stream, c.subscribed) && canSeeStreamMetadata(after, c.stream, c.subscribed));
  const lost = channels.filter((c) => canSeeStreamMetadata(before, c.stream, c.subscribed) && !canSeeStreamMetadata(after, c.stream, c.subscribed));
  if (gained.length === 0 && lost.length === 0) return null;

  const traffic = await weeklyTraffic(db, [...gained, ...lost].map((c) => c.stream), nowSeconds());
  const dict = (c: (typeof channels)[number]) => formatStream(c.stream, traffic.get(c.stream.id) ?? null);
  const events: ClientEvent[] = [];
  if (gained.length > 0) {
    events.push({ type: 'stream', op: 'create', streams: gained.map(dict) });
    const peers = gained.filter((c) => canSeeSubscribers(after, c.stream, c.subscribed));
    const subscribers = await subscribersByStream(db, peers.map((c) => c.stream.id));
    for (const c of peers) {
      const userIds = subscribers.get(c.stream.id) ?? [];
      if (userIds.length > 0) events.push({ type: 'subscription', op: 'peer_add', stream_ids: [c.stream.id], user_ids: userIds });
    }
  }
  if (lost.length > 0) {
    events.push({ type: 'stream', op: 'delete', streams: lost.map(dict), stream_ids: lost.map((c) => c.stream.id) });
  }
  return { audience: new Set([d.user_id]), forUser: () => events };
});
