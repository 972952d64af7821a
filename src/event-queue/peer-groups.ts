/** A channel whose subscribers one request changed, as the grouping of peer events needs it. */
export interface PeerStream {
  id: number;
  invite_only: boolean;
  is_web_public: boolean;
  /** Some active subscriber (after the change) is a guest. */
  has_guest_subscriber: boolean;
}

/** One peer_add / peer_remove event: these users joined (left) these channels. */
export interface PeerGroup {
  stream_ids: number[];
  user_ids: number[];
}

const ascending = (a: number, b: number) => a - b;

/**
 * How the real server combines one request's subscriber changes into peer events
 * (send_peer_subscriber_events in zerver/actions/streams.py): each private channel gets an event
 * of its own, since its peers are its own subscribers. Public channels changed for the same set of
 * users share events by who may see their subscribers: the web-public ones one event (everyone),
 * those without a guest subscriber another (every non-guest); one with a guest subscriber has
 * peers of its own and an event of its own. `streams` come in the order the request changed them;
 * `altered` holds the users each one gained or lost.
 */
export function peerGroups(streams: readonly PeerStream[], altered: ReadonlyMap<number, ReadonlySet<number>>): PeerGroup[] {
  const usersOf = (id: number) => [...(altered.get(id) ?? [])].sort(ascending);
  const out: PeerGroup[] = [];
  for (const stream of streams) {
    const user_ids = usersOf(stream.id);
    if (stream.invite_only && user_ids.length > 0) out.push({ stream_ids: [stream.id], user_ids });
  }
  const bySameUsers = new Map<string, { user_ids: number[]; streams: PeerStream[] }>();
  for (const stream of streams) {
    const user_ids = usersOf(stream.id);
    if (stream.invite_only || user_ids.length === 0) continue;
    const key = user_ids.join(',');
    const group = bySameUsers.get(key) ?? { user_ids, streams: [] };
    group.streams.push(stream);
    bySameUsers.set(key, group);
  }
  for (const { user_ids, streams: same } of bySameUsers.values()) {
    const webPublic: number[] = [];
    const withoutGuests: number[] = [];
    for (const stream of same) {
      if (stream.is_web_public) webPublic.push(stream.id);
      else if (!stream.has_guest_subscriber) withoutGuests.push(stream.id);
      else out.push({ stream_ids: [stream.id], user_ids });
    }
    if (webPublic.length > 0) out.push({ stream_ids: webPublic.sort(ascending), user_ids });
    if (withoutGuests.length > 0) out.push({ stream_ids: withoutGuests.sort(ascending), user_ids });
  }
  return out;
}
