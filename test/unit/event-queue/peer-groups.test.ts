import t from 'tap';
import { peerGroups, type PeerStream } from '../../../src/event-queue/peer-groups.js';

/** The real server's combination of peer events (send_peer_subscriber_events), as a pure rule. */

const stream = (id: number, kind: 'private' | 'public' | 'web' | 'guests'): PeerStream => ({
  id,
  invite_only: kind === 'private',
  is_web_public: kind === 'web',
  has_guest_subscriber: kind === 'guests',
});
const altered = (entries: Array<[number, number[]]>) => new Map(entries.map(([id, users]) => [id, new Set(users)]));

t.test('one user, several public channels: one event', async (t) => {
  t.same(peerGroups([stream(3, 'public'), stream(1, 'public'), stream(2, 'public')], altered([[3, [7]], [1, [7]], [2, [7]]])), [
    { stream_ids: [1, 2, 3], user_ids: [7] },
  ]);
});

t.test('several users, the same channels: one event with all of them', async (t) => {
  t.same(peerGroups([stream(1, 'public'), stream(2, 'public')], altered([[1, [9, 7, 8]], [2, [8, 9, 7]]])), [
    { stream_ids: [1, 2], user_ids: [7, 8, 9] },
  ]);
});

t.test('channels that gained different users get different events', async (t) => {
  t.same(peerGroups([stream(1, 'public'), stream(2, 'public'), stream(3, 'public')], altered([[1, [7, 8]], [2, [7]], [3, [7, 8]]])), [
    { stream_ids: [1, 3], user_ids: [7, 8] },
    { stream_ids: [2], user_ids: [7] },
  ]);
});

t.test('private channels: one event each, before the public ones', async (t) => {
  t.same(peerGroups([stream(1, 'public'), stream(2, 'private'), stream(3, 'private')], altered([[1, [7]], [2, [7]], [3, [7]]])), [
    { stream_ids: [2], user_ids: [7] },
    { stream_ids: [3], user_ids: [7] },
    { stream_ids: [1], user_ids: [7] },
  ]);
});

t.test('within a set of users: guest-subscribed channels alone, then web-public, then the other public ones', async (t) => {
  const streams = [stream(1, 'public'), stream(2, 'web'), stream(3, 'guests'), stream(4, 'web'), stream(5, 'public'), stream(6, 'guests')];
  const users = altered(streams.map((s) => [s.id, [7]]));
  t.same(peerGroups(streams, users), [
    { stream_ids: [3], user_ids: [7] },
    { stream_ids: [6], user_ids: [7] },
    { stream_ids: [2, 4], user_ids: [7] },
    { stream_ids: [1, 5], user_ids: [7] },
  ]);
});

t.test('channels nobody joined or left give nothing', async (t) => {
  t.same(peerGroups([stream(1, 'public'), stream(2, 'private')], altered([[1, []]])), []);
});
