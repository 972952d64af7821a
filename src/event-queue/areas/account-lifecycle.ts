import type { DataOf } from '../../domain/events.js';
import type { Db } from '../../db/database.js';
import type { StoredEvent } from '../../eventstore/types.js';
import { Role } from '../../domain/roles.js';
import { formatUser, type UserRow } from '../../read/users.js';
import { realmHost } from '../../read/realm.js';
import { channelPeerIds, directMessagePartnerIds, guestsWhoCanAccess, mayHearAbout, realmLimitsGuests, INACCESSIBLE_USER_NAME } from '../../read/user-access.js';
import { canSeeSubscribers, type StreamRow } from '../../visibility.js';
import { botOwnerAsOf } from '../bot-owner-as-of.js';
import { peerGroups } from '../peer-groups.js';
import { requestEvents } from '../request-events.js';
import { registerTranslator } from '../translators.js';
import type { ClientEvent, PreparedEvent, Recipient } from '../types.js';
import { roleBefore, systemGroupId } from '../user-history.js';
import { botAdministrators, botOwnerChange } from './users.js';
import { requestMembershipChanges } from './user-groups.js';

/**
 * Deactivating and reactivating an account, in the real server's order and to its audiences
 * (do_deactivate_user with send_events_for_user_deactivation, do_reactivate_user). A deactivated
 * user's bots are deactivated first, each with events of its own (services/users.ts records them
 * before their owner).
 *
 * Deactivation: the subscribers of the account's channels hear it leave (peer_remove); everyone
 * who may know the account gets realm_user update is_active false, which also takes it out of
 * every group and subscriber list the client holds; a guest who may not know it (limited user
 * access) instead gets user_group remove_members for each group it was a direct member of, and,
 * when the two shared a channel, realm_user remove; a bot's administrators get realm_bot update.
 *
 * Reactivation: realm_user update is_active true to whoever may know the account (a limited guest
 * who knows it through a channel alone gets realm_user add: see below), realm_bot update
 * for a bot (and its new owner's events when its owner is gone, see decider.ts), peer_add to the
 * subscribers of its channels, then user_group add_members for each of its groups, by group id.
 */

const viewerOf = (r: Recipient) => ({ user_id: r.user.id, role: r.user.role, realm_id: r.realm.id });

/**
 * The peer events for the account's arrival in (departure from) the subscriber lists of its live
 * channels, combined as the real server combines one request's (peer-groups.ts).
 */
async function peerEvents(db: Db, userId: number, op: 'peer_add' | 'peer_remove'): Promise<(r: Recipient) => ClientEvent[]> {
  const streams = await db
    .selectFrom('subscriptions as sub')
    .innerJoin('streams as s', 's.id', 'sub.stream_id')
    .selectAll('s')
    .where('sub.user_id', '=', userId)
    .where('sub.active', '=', true)
    .where('s.deactivated', '=', false)
    .orderBy('s.id')
    .execute();
  if (streams.length === 0) return () => [];
  const subscribers = await db
    .selectFrom('subscriptions as sub')
    .innerJoin('users as u', 'u.id', 'sub.user_id')
    .select(['sub.stream_id', 'sub.user_id', 'u.role', 'u.is_active'])
    .where('sub.stream_id', 'in', streams.map((s) => s.id))
    .where('sub.active', '=', true)
    .execute();
  const subscribedTo = new Map<number, Set<number>>();
  for (const s of subscribers) {
    let mine = subscribedTo.get(s.user_id);
    if (!mine) subscribedTo.set(s.user_id, (mine = new Set()));
    mine.add(s.stream_id);
  }
  // Guests among the subscribers once the account has arrived (left).
  const guestIn = new Set(subscribers.filter((s) => s.role === Role.GUEST && (s.user_id === userId ? op === 'peer_add' : s.is_active)).map((s) => s.stream_id));
  const groups = peerGroups(
    streams.map((s) => ({ id: s.id, invite_only: s.invite_only, is_web_public: s.is_web_public, has_guest_subscriber: guestIn.has(s.id) })),
    new Map(streams.map((s) => [s.id, new Set([userId])])),
  );
  const rows = new Map<number, StreamRow>(streams.map((s) => [s.id, s]));
  return (r) => {
    if (r.user.id === userId) return [];
    const mine = subscribedTo.get(r.user.id);
    return groups
      .filter((g) => g.stream_ids.every((id) => canSeeSubscribers(viewerOf(r), rows.get(id)!, mine?.has(id) ?? false)))
      .map((g) => ({ type: 'subscription', op, stream_ids: g.stream_ids, user_ids: g.user_ids }));
  };
}

/**
 * The named groups the account is a direct member of around `event`, by id: its role's group (as of
 * the event: the read tables take it out of system groups while deactivated), role:fullmembers when
 * the same request moved it there (`op`), and its other groups as they stand.
 */
async function directGroups(db: Db, event: StoredEvent, user: UserRow, op: 'add_members' | 'remove_members'): Promise<number[]> {
  const ids = new Set<number>();
  const role = await roleBefore(db, event);
  const roleGroup = role === undefined ? undefined : await systemGroupId(db, user.realm_id, role);
  if (roleGroup !== undefined) ids.add(roleGroup);
  for (const change of await requestMembershipChanges(db, event, user.id)) if (change.op === op) ids.add(change.group_id);
  const others = await db
    .selectFrom('user_group_members as m')
    .innerJoin('user_groups as g', 'g.id', 'm.group_id')
    .select('g.id')
    .where('m.user_id', '=', user.id)
    .where('g.is_system_group', '=', false)
    .execute();
  for (const row of others) ids.add(row.id);
  return [...ids].sort((a, b) => a - b);
}

/** The user as realm_user add carries it to `r` (as for a new account). */
function personFor(user: UserRow, r: Recipient): Record<string, unknown> {
  return formatUser({ ...user, is_active: true }, viewerOf(r), {
    clientGravatar: r.queue.client_gravatar,
    includeCustomProfileFields: true,
    realmHost: realmHost(r.realm),
    avatarUrlOptional: r.queue.client_capabilities.user_avatar_url_field_optional,
  });
}

const membershipEvents = (op: 'add_members' | 'remove_members', groups: number[], userId: number): ClientEvent[] =>
  groups.map((group_id) => ({ type: 'user_group', op, group_id, user_ids: [userId] }));

/** Who administered the bot at `event` (its owner then), or nobody for a human. */
async function botAudience(db: Db, user: UserRow, event: StoredEvent, owner?: number | null): Promise<ReadonlySet<number>> {
  if (!user.is_bot) return new Set();
  return botAdministrators(db, { ...user, bot_owner_id: owner === undefined ? await botOwnerAsOf(db, event) : owner });
}

registerTranslator('UserDeactivated', async (e, db) => {
  const d = e.data as DataOf<'UserDeactivated'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const peers = await peerEvents(db, user.id, 'peer_remove');
  const bots = await botAudience(db, user, e);
  // Bots stay known to everyone; otherwise limited guests keep knowing only their direct message partners.
  const limited = !user.is_bot && (await realmLimitsGuests(db, user.realm_id));
  const partners = limited ? await directMessagePartnerIds(db, user) : new Set<number>();
  const channelPeers = limited ? await channelPeerIds(db, user.id) : new Set<number>();
  const groups = limited ? await directGroups(db, e, user, 'remove_members') : [];
  return {
    audience: 'realm',
    forUser: (r) => {
      const events = peers(r);
      if (!limited || r.user.role !== Role.GUEST || partners.has(r.user.id)) {
        events.push({ type: 'realm_user', op: 'update', person: { user_id: user.id, is_active: false } });
      } else {
        events.push(...membershipEvents('remove_members', groups, user.id));
        if (channelPeers.has(r.user.id)) events.push({ type: 'realm_user', op: 'remove', person: { user_id: user.id, full_name: INACCESSIBLE_USER_NAME } });
      }
      if (bots.has(r.user.id)) events.push({ type: 'realm_bot', op: 'update', bot: { user_id: user.id, is_active: false } });
      return events;
    },
  };
});

registerTranslator('UserReactivated', async (e, db) => {
  const d = e.data as DataOf<'UserReactivated'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const guests = await guestsWhoCanAccess(db, user.id);
  const partners = guests === null ? new Set<number>() : await directMessagePartnerIds(db, user);
  // A bot whose owner is gone passes to the administrator who reactivates it, in the same request.
  const ownerChange = (await requestEvents(db, e, ['UserBotOwnerChanged']))
    .find((o) => o.position > e.position && (o.data as { user_id: number }).user_id === user.id);
  const newOwner = ownerChange ? (ownerChange.data as DataOf<'UserBotOwnerChanged'>) : undefined;
  const bots = await botAudience(db, user, e, newOwner?.bot_owner_id);
  const owner: PreparedEvent | null = newOwner ? await botOwnerChange(db, newOwner) : null;
  const peers = await peerEvents(db, user.id, 'peer_add');
  const groups = membershipEvents('add_members', await directGroups(db, e, user, 'add_members'), user.id);
  return {
    audience: 'realm',
    forUser: (r) => {
      const events: ClientEvent[] = [];
      if (guests !== null && r.user.role === Role.GUEST && r.user.id !== user.id && guests.has(r.user.id) && !partners.has(r.user.id)) {
        // A limited guest who knows the account through a channel alone lost it at the deactivation
        // (realm_user remove: an "Unknown user" in their list) or never had it: the real server's
        // update would leave the placeholder in place, so they get the whole user back instead.
        events.push({ type: 'realm_user', op: 'add', person: personFor(user, r) });
      } else if (mayHearAbout(r.user, guests)) {
        events.push({ type: 'realm_user', op: 'update', person: { user_id: user.id, is_active: true } });
      }
      if (bots.has(r.user.id)) events.push({ type: 'realm_bot', op: 'update', bot: { user_id: user.id, is_active: true } });
      if (owner) events.push(...owner.forUser(r));
      events.push(...peers(r), ...groups);
      return events;
    },
  };
});
