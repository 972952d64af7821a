import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { Role, isAdminRole } from '../domain/roles.js';
import { waitingPeriodDays, withinWaitingPeriod } from '../domain/user-groups/full-members.js';
import {
  checkRemoveSubscribersGroup,
  checkColor,
  checkStreamName,
  checkSubscriptionProperty,
  decideArchiveStream,
  decideCreateStream,
  decideSubscriptionProperty,
  decideUpdateStream,
  hasPolicy,
  normalizeDescription,
  parseRetentionDays,
  rejectNul,
  pickColor,
  type ChannelActor,
  type ChannelRealmSettings,
  type GroupRef,
  type StreamChanges,
  type StreamState,
} from '../domain/channels/decider.js';
import type { ChannelEvent, StreamNameReserved } from '../domain/channels/events.js';
import { StreamVersionConflict } from '../eventstore/types.js';
import type { StreamAppend } from '../eventstore/types.js';
import { emptyRenderContext, renderMarkdownAsync } from '../markdown/index.js';
import { realmRenderData } from './render-context.js';
import { getActiveStreamByName, getStreamById, getSubscription, isDbId, subscriptionsOfUser } from '../read/channels.js';
import { apiEmail, getUserByEmailFor, getUserById, type UserRow } from '../read/users.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import { canJoinStream, subscriberIds, type StreamRow } from '../visibility.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { markChannelReadFor, readOnLeaving } from './message-flags.js';
import { notifyChannelChanges, notifySubscriptions, type CreatedChannel } from './channel-notices.js';
import { defaultStreamGroupsStream, listDefaultStreamGroupRows } from './default-stream-groups.js';
import { streamVersion } from './stream-version.js';
import type { DefaultStreamGroupChanged } from '../domain/realm-admin/events.js';

export const channelStream = (streamId: number) => `channel-${streamId}`;
export const subscriptionStream = (streamId: number, userId: number) => `subscription-${streamId}-${userId}`;
const nameStream = (realmId: number, name: string) => `channel-name-${realmId}-${name.toLowerCase()}`;

export function actorOf(user: UserRow, realm: RealmRow, now: Date): ChannelActor {
  const waiting = withinWaitingPeriod(user.date_joined, waitingPeriodDays(realm.properties), now);
  return { user_id: user.id, role: user.role, is_full_member: user.role <= Role.MEMBER && !waiting };
}

export function realmSettingsOf(realm: RealmRow, webPublicServerSetting: boolean): ChannelRealmSettings {
  const p = realm.properties;
  return {
    create_public_stream_policy: Number(p.create_public_stream_policy ?? 1),
    create_private_stream_policy: Number(p.create_private_stream_policy ?? 1),
    create_web_public_stream_policy: Number(p.create_web_public_stream_policy ?? 7),
    invite_to_stream_policy: Number(p.invite_to_stream_policy ?? 1),
    web_public_streams_enabled: webPublicServerSetting && p.enable_spectator_access === true,
  };
}

export function toStreamState(row: StreamRow): StreamState {
  return {
    stream_id: row.id,
    name: row.name,
    description: row.description,
    rendered_description: row.rendered_description,
    invite_only: row.invite_only,
    is_web_public: row.is_web_public,
    history_public_to_subscribers: row.history_public_to_subscribers,
    stream_post_policy: row.stream_post_policy,
    message_retention_days: row.message_retention_days,
    can_remove_subscribers_group: row.can_remove_subscribers_group,
    is_default: row.is_default,
    deactivated: row.deactivated,
  };
}

/** Descriptions render like messages (mentions, channel links, linkifiers, emoji). */
export async function renderDescription(ctx: ServiceContext, description: string, realm: RealmRow): Promise<string> {
  if (description === '') return '';
  const context = await realmRenderData(ctx, realm.id).then((d) => d.context, () => emptyRenderContext(realm.url));
  return (await renderMarkdownAsync(description, context)).html;
}

async function findGroup(db: Db, realmId: number, groupId: number): Promise<GroupRef | undefined> {
  if (!isDbId(groupId)) return undefined;
  return db
    .selectFrom('user_groups')
    .select(['id', 'name', 'is_system_group'])
    .where('id', '=', groupId)
    .where('realm_id', '=', realmId)
    .executeTakeFirst();
}

async function defaultRemoveSubscribersGroup(db: Db, realmId: number): Promise<number> {
  const group = await db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', true)
    .where('name', '=', 'role:administrators')
    .executeTakeFirst();
  return group?.id ?? 0;
}

/** Whether the channel that last claimed this name is still live (not archived, not renamed away), by the log. */
async function reservationIsLive(db: Db, streamName: string, name: string, claimant: number): Promise<boolean> {
  const last = await db.selectFrom('events').select('data').where('stream_id', '=', streamName).orderBy('stream_version', 'desc').limit(1).executeTakeFirst();
  const reservedId = Number(last?.data.stream_id);
  if (!Number.isInteger(reservedId) || reservedId === claimant) return false;
  const history = await db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('stream_id', '=', channelStream(reservedId))
    .where('type', 'in', ['StreamArchived', 'StreamPropertyChanged'])
    .orderBy('stream_version')
    .execute();
  let live = true;
  for (const e of history) {
    if (e.type === 'StreamArchived') live = false;
    else if (e.data.property === 'name') live = String(e.data.value).toLowerCase() === name.toLowerCase();
  }
  return live;
}

/** An append that claims a channel name; conflicting claims retry and then see the name taken. */
async function nameClaim(db: Db, realmId: number, name: string, streamId: number): Promise<StreamAppend> {
  const streamName = nameStream(realmId, name);
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('stream_version').as('v'))
    .where('stream_id', '=', streamName)
    .executeTakeFirst();
  const version = Number(row?.v ?? 0);
  if (version > 0 && (await reservationIsLive(db, streamName, name, streamId))) {
    // The log already holds a live channel of this name that the read tables do not show yet:
    // retry once they have caught up (the caller then finds and joins that channel).
    throw new StreamVersionConflict(streamName, version, version);
  }
  const event: StreamNameReserved = { type: 'StreamNameReserved', data: { realm_id: realmId, name, stream_id: streamId } };
  return { streamId: streamName, expectedVersion: version === 0 ? -1 : version, events: [event] };
}

/**
 * `principals`: user ids or email addresses (a real one only if `caller` may see it); unknown users
 * are "No such user", deactivated ones "User is deactivated".
 */
async function resolvePrincipals(db: Db, realm: RealmRow, caller: UserRow, principals: Array<number | string>): Promise<UserRow[]> {
  const viewer = { user_id: caller.id, role: caller.role, realm_id: realm.id };
  const users = new Map<number, UserRow>();
  for (const principal of principals) {
    if (typeof principal === 'string') rejectNul(principal, 'principals');
    const user = typeof principal === 'number'
      ? isDbId(principal) ? await getUserById(db, principal) : undefined
      : await getUserByEmailFor(db, viewer, principal, realmHost(realm));
    if (!user || user.realm_id !== realm.id) throw errors.noSuchUser();
    if (!user.is_active) throw errors.badRequest('User is deactivated');
    users.set(user.id, user);
  }
  return [...users.values()];
}

export interface SubscribeInput {
  /** `color`: the colour the new subscriptions to that channel get (a returning subscriber keeps theirs) */
  subscriptions: Array<{ name: string; description?: string; color?: string }>;
  principals?: Array<number | string>;
  authorization_errors_fatal?: boolean;
  invite_only?: boolean;
  is_web_public?: boolean;
  is_default_stream?: boolean;
  history_public_to_subscribers?: boolean;
  stream_post_policy?: number;
  message_retention_days?: string | number;
  can_remove_subscribers_group?: number;
  /** Notification Bot announces the channels this request creates (see channel-notices.ts). */
  announce?: boolean;
}

export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
}

/** POST /users/me/subscriptions: creates missing channels, then subscribes the principals. */
export async function subscribe(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, input: SubscribeInput): Promise<SubscribeResult> {
  const actor = actorOf(user, realm, meta.now);
  const settings = realmSettingsOf(realm, ctx.config.webPublicStreamsEnabled ?? false);
  const viewer = { user_id: user.id, role: user.role, realm_id: realm.id };
  // Guests join channels only when someone adds them.
  if (user.role === Role.GUEST) throw errors.badRequest('Not allowed for guest users');
  const wanted = input.subscriptions.map((s, i) => ({
    name: checkStreamName(s.name),
    description: normalizeDescription(s.description ?? ''),
    color: s.color === undefined ? undefined : checkColor(`subscriptions[${i}]["color"]`, s.color),
  }));
  const retention = input.message_retention_days === undefined ? undefined : parseRetentionDays(input.message_retention_days);
  const removeGroup = input.can_remove_subscribers_group === undefined
    ? await defaultRemoveSubscribersGroup(ctx.db, realm.id)
    : checkRemoveSubscribersGroup(await findGroup(ctx.db, realm.id, input.can_remove_subscribers_group));
  const principals = input.principals ?? [];
  const targets = principals.length > 0 ? await resolvePrincipals(ctx.db, realm, user, principals) : [user];
  const others = targets.some((t) => t.id !== user.id);
  if (others && !hasPolicy(settings.invite_to_stream_policy, actor)) throw errors.badRequest('Insufficient permission');
  const newIds = new Map<string, number>();

  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const appends: StreamAppend[] = [];
    const streams: Array<{ id: number; name: string; color: string | undefined }> = [];
    const createdChannels: CreatedChannel[] = [];
    const unauthorized: string[] = [];
    const seen = new Set<string>();
    for (const w of wanted) {
      const key = w.name.toLowerCase();
      if (seen.has(key)) continue;
      seen.add(key);
      const existing = await getActiveStreamByName(ctx.db, realm.id, w.name);
      if (existing) {
        const sub = await getSubscription(ctx.db, user.id, existing.id);
        if (!canJoinStream(viewer, existing, sub?.active === true)) {
          if (input.authorization_errors_fatal ?? true) throw errors.badRequest(`Unable to access channel (${existing.name}).`);
          unauthorized.push(existing.name);
          continue;
        }
        streams.push({ id: existing.id, name: existing.name, color: w.color });
        continue;
      }
      let streamId = newIds.get(key);
      if (streamId === undefined) {
        streamId = await ctx.commands.nextId('stream_id_seq');
        newIds.set(key, streamId);
      }
      const created = decideCreateStream({
        type: 'CreateStream',
        actor,
        realm: settings,
        stream_id: streamId,
        realm_id: realm.id,
        now: Math.floor(meta.now.getTime() / 1000),
        name: w.name,
        description: w.description,
        rendered_description: await renderDescription(ctx, w.description, realm),
        invite_only: input.invite_only ?? false,
        is_web_public: input.is_web_public ?? false,
        history_public_to_subscribers: input.history_public_to_subscribers,
        stream_post_policy: input.stream_post_policy ?? 1,
        message_retention_days: retention,
        can_remove_subscribers_group: removeGroup,
        is_default: input.is_default_stream ?? false,
      });
      appends.push(await nameClaim(ctx.db, realm.id, w.name, streamId));
      appends.push({ streamId: channelStream(streamId), expectedVersion: -1, events: [created] });
      streams.push({ id: streamId, name: w.name, color: w.color });
      const { invite_only, history_public_to_subscribers, is_web_public } = created.data;
      createdChannels.push({ id: streamId, name: w.name, description: w.description, invite_only, history_public_to_subscribers, is_web_public });
    }
    const subscribed: Record<string, string[]> = {};
    const already: Record<string, string[]> = {};
    const newlySubscribed: Array<{ user: UserRow; channelNames: string[] }> = [];
    const host = realmHost(realm);
    for (const target of targets) {
      const channelNames: string[] = [];
      newlySubscribed.push({ user: target, channelNames });
      const existingSubs = await subscriptionsOfUser(ctx.db, target.id);
      const used = new Set(existingSubs.filter((s) => s.active).map((s) => s.color));
      const email = apiEmail(target, host);
      for (const stream of streams) {
        const sub = existingSubs.find((s) => s.stream_id === stream.id);
        if (sub?.active) {
          (already[email] ??= []).push(stream.name);
          continue;
        }
        const color = sub?.color ?? stream.color ?? pickColor(used, existingSubs.length + used.size);
        used.add(color);
        appends.push({
          streamId: subscriptionStream(stream.id, target.id),
          expectedVersion: sub ? sub.version : -1,
          events: [{ type: 'UserSubscribed', data: { stream_id: stream.id, user_id: target.id, color } }],
        });
        (subscribed[email] ??= []).push(stream.name);
        channelNames.push(stream.name);
      }
    }
    const out: SubscribeResult = { subscribed, already_subscribed: already };
    if (input.authorization_errors_fatal === false) out.unauthorized = unauthorized;
    return { appends, result: { out, notices: { newlySubscribed, created: createdChannels, announce: input.announce ?? false } } };
  });
  await notifySubscriptions(ctx, meta, user, realm, result.notices);
  return result.out;
}

/** DELETE /users/me/subscriptions. */
/**
 * Throws the error `unsubscribe` would throw for the caller's own channel names, without writing:
 * PATCH /users/me/subscriptions checks its `delete` list before applying its `add` list, so that a
 * request that fails changes nothing.
 */
export async function checkOwnUnsubscribe(ctx: ServiceContext, user: UserRow, realm: RealmRow, names: string[]): Promise<void> {
  await channelsToLeave(ctx.db, user, realm, names);
}

/**
 * The named channels, each once; every name the caller cannot see is missing, and all missing
 * names are reported in one error, as the real server lists them.
 */
async function channelsToLeave(db: Db, user: UserRow, realm: RealmRow, names: string[]): Promise<Array<{ stream: StreamRow; subscribed: boolean }>> {
  const viewer = { user_id: user.id, role: user.role, realm_id: realm.id };
  const found: Array<{ stream: StreamRow; subscribed: boolean }> = [];
  const missing: string[] = [];
  for (const raw of names) {
    const name = checkStreamName(raw);
    const stream = await getActiveStreamByName(db, realm.id, name);
    const subscribed = stream ? (await getSubscription(db, user.id, stream.id))?.active === true : false;
    // A private channel the caller cannot see does not exist for them.
    if (!stream || !(canJoinStream(viewer, stream, subscribed) || isAdminRole(user.role))) missing.push(name);
    else if (!found.some((f) => f.stream.id === stream.id)) found.push({ stream, subscribed });
  }
  if (missing.length > 0) throw errors.badRequest(`Channel(s) (${missing.join(', ')}) do not exist`);
  return found;
}

export async function unsubscribe(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  names: string[],
  principals: Array<number | string> | undefined,
): Promise<{ removed: string[]; not_removed: string[] }> {
  const targets = principals && principals.length > 0 ? await resolvePrincipals(ctx.db, realm, user, principals) : [user];
  // Removing one's own bots is allowed like removing oneself.
  const others = targets.some((t) => t.id !== user.id && !(t.is_bot && t.bot_owner_id === user.id));
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const found = await channelsToLeave(ctx.db, user, realm, names);
    for (const { stream, subscribed } of found) {
      if (others && !isAdminRole(user.role) && !(await mayRemoveSubscribers(ctx.db, user, stream, subscribed))) {
        throw errors.badRequest('Insufficient permission');
      }
    }
    const streams = found.map((f) => f.stream);
    const appends: StreamAppend[] = [];
    // Marking read follows all the departures, as the real server defers it: the departures stay one
    // run of the log, which event queues turn into the request's grouped events (event-queue/command-runs.ts).
    const reads: StreamAppend[] = [];
    const removed: string[] = [];
    const notRemoved: string[] = [];
    for (const target of targets) {
      const left: number[] = [];
      for (const stream of streams) {
        const sub = await getSubscription(ctx.db, target.id, stream.id);
        if (!sub?.active) {
          notRemoved.push(stream.name);
          continue;
        }
        appends.push({
          streamId: subscriptionStream(stream.id, target.id),
          expectedVersion: sub.version,
          events: [{ type: 'UserUnsubscribed', data: { stream_id: stream.id, user_id: target.id } }],
        });
        removed.push(stream.name);
        left.push(stream.id);
      }
      // Leaving a channel marks its unread messages read, as on the real server.
      const read = await readOnLeaving(ctx.db, target, left);
      if (read) reads.push(read);
    }
    return { appends: [...appends, ...reads], result: { removed, not_removed: notRemoved } };
  });
  return result;
}

/** Members of the channel's can_remove_subscribers_group (through subgroups) who can access the channel. */
async function mayRemoveSubscribers(db: Db, user: UserRow, stream: StreamRow, subscribed: boolean): Promise<boolean> {
  if (stream.invite_only && !subscribed) return false;
  const { rows } = await sql<{ ok: boolean }>`
    WITH RECURSIVE g(id) AS (
      SELECT ${stream.can_remove_subscribers_group}::int
      UNION SELECT s.subgroup_id FROM user_group_subgroups s JOIN g ON s.group_id = g.id
    )
    SELECT EXISTS (SELECT 1 FROM user_group_members m JOIN g ON m.group_id = g.id WHERE m.user_id = ${user.id}) AS ok`.execute(db);
  return rows[0]?.ok === true;
}

export interface UpdateStreamInput {
  description?: string;
  new_name?: string;
  is_private?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  stream_post_policy?: number;
  is_announcement_only?: boolean;
  message_retention_days?: string | number;
  can_remove_subscribers_group?: number;
}

async function requireStream(db: Db, realmId: number, streamId: number): Promise<StreamRow> {
  const row = await getStreamById(db, streamId);
  if (!row || row.realm_id !== realmId || row.deactivated) throw errors.invalidChannelId();
  return row;
}

/** PATCH /streams/{stream_id}. */
export async function updateStream(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, streamId: number, input: UpdateStreamInput): Promise<void> {
  const actor = actorOf(user, realm, meta.now);
  const settings = realmSettingsOf(realm, ctx.config.webPublicStreamsEnabled ?? false);
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireStream(ctx.db, realm.id, streamId);
    const subscribed = (await getSubscription(ctx.db, user.id, streamId))?.active === true;
    const changes: StreamChanges = {
      is_private: input.is_private,
      is_web_public: input.is_web_public,
      history_public_to_subscribers: input.history_public_to_subscribers,
      is_default_stream: input.is_default_stream,
      stream_post_policy: input.stream_post_policy,
      is_announcement_only: input.is_announcement_only,
    };
    if (input.description !== undefined) {
      changes.description = normalizeDescription(input.description);
      changes.rendered_description = await renderDescription(ctx, changes.description, realm);
    }
    if (input.new_name !== undefined) changes.new_name = input.new_name;
    if (input.message_retention_days !== undefined) changes.message_retention_days = parseRetentionDays(input.message_retention_days);
    if (input.can_remove_subscribers_group !== undefined) {
      changes.can_remove_subscribers_group = checkRemoveSubscribersGroup(await findGroup(ctx.db, realm.id, input.can_remove_subscribers_group));
    }
    const newName = input.new_name?.trim();
    const taken = newName ? await getActiveStreamByName(ctx.db, realm.id, newName) : undefined;
    const before = toStreamState(row);
    const events = decideUpdateStream(
      { type: 'UpdateStream', actor, actor_subscribed: subscribed, realm: settings, new_name_taken: !!taken && taken.id !== streamId, changes },
      before,
    );
    const appends: StreamAppend[] = [{ streamId: channelStream(streamId), expectedVersion: row.version, events }];
    const rename = events.find((e) => e.type === 'StreamPropertyChanged' && e.data.property === 'name');
    if (rename && rename.type === 'StreamPropertyChanged') appends.push(await nameClaim(ctx.db, realm.id, String(rename.data.value), streamId));
    return { appends, result: { before, events } };
  });
  await notifyChannelChanges(ctx, meta, user, realm, result.before, result.events);
}

/** DELETE /streams/{stream_id}: archives the channel. */
export async function archiveStream(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, streamId: number): Promise<void> {
  const actor = actorOf(user, realm, meta.now);
  const { result: subscribers } = await ctx.commands.run(metadataOf(meta), async () => {
    const archived = await getStreamById(ctx.db, streamId);
    // An administrator learns that an archived channel is archived; anyone else, that it is unknown.
    if (archived?.deactivated && archived.realm_id === realm.id && isAdminRole(user.role)) throw errors.badRequest('Channel is already deactivated');
    const row = await requireStream(ctx.db, realm.id, streamId);
    const subscribed = (await getSubscription(ctx.db, user.id, streamId))?.active === true;
    const events = decideArchiveStream(actor, toStreamState(row), subscribed);
    const appends: StreamAppend[] = [{ streamId: channelStream(streamId), expectedVersion: row.version, events }];
    const groups = await leaveDefaultStreamGroups(ctx, realm.id, streamId);
    if (groups) appends.push(groups);
    return { appends, result: await subscriberIds(ctx.db, streamId) };
  });
  // Nobody is left with unread messages in an archived channel.
  for (const id of subscribers) {
    const subscriber = await getUserById(ctx.db, id);
    if (subscriber?.is_active) await markChannelReadFor(ctx, meta, subscriber, streamId);
  }
}

/**
 * An archived channel leaves every default channel group, as on the real server (each group that
 * held it sends its default_stream_groups event); unarchiving does not bring it back.
 */
async function leaveDefaultStreamGroups(ctx: ServiceContext, realmId: number, streamId: number): Promise<StreamAppend | null> {
  const groupsStream = defaultStreamGroupsStream(realmId);
  const version = await streamVersion(ctx, groupsStream);
  const events = (await listDefaultStreamGroupRows(ctx.db, realmId))
    .filter((group) => group.stream_ids.includes(streamId))
    .sort((a, b) => a.id - b.id)
    .map((group): DefaultStreamGroupChanged => ({
      type: 'DefaultStreamGroupChanged',
      data: { realm_id: realmId, group_id: group.id, name: group.name, description: group.description, stream_ids: group.stream_ids.filter((id) => id !== streamId) },
    }));
  return events.length === 0 ? null : { streamId: groupsStream, expectedVersion: version === 0 ? -1 : version, events };
}

/** POST /users/me/subscriptions/properties: each change needs an active subscription. */
export async function setSubscriptionProperties(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  changes: Array<{ stream_id: number; property: string; value: unknown }>,
): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const byStream = new Map<string, { expectedVersion: number; events: ChannelEvent[] }>();
    for (const change of changes) {
      checkSubscriptionProperty(change.property);
      const stream = await getStreamById(ctx.db, change.stream_id);
      const sub = stream && stream.realm_id === realm.id && !stream.deactivated ? await getSubscription(ctx.db, user.id, change.stream_id) : undefined;
      if (!stream || stream.realm_id !== realm.id || stream.deactivated) throw errors.invalidChannelId();
      if (!sub?.active) throw errors.badRequest(`Not subscribed to channel ID ${change.stream_id}`);
      const event = decideSubscriptionProperty(change.stream_id, user.id, change.property, change.value);
      const key = subscriptionStream(change.stream_id, user.id);
      const entry = byStream.get(key) ?? { expectedVersion: sub.version, events: [] };
      entry.events.push(event);
      byStream.set(key, entry);
    }
    const appends = [...byStream].map(([streamId, e]) => ({ streamId, expectedVersion: e.expectedVersion, events: e.events }));
    return { appends, result: undefined };
  });
}

/** POST /user_topics: the user's visibility policy for one topic (the topic need not have messages). */
export async function setUserTopic(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  streamId: number,
  topic: string,
  policy: number,
  /** false: the caller has checked the channel (clearing a policy needs no access, as on the real server) */
  checkAccess = true,
): Promise<void> {
  if (checkAccess) {
    const stream = await getStreamById(ctx.db, streamId);
    if (!stream || stream.realm_id !== realm.id || stream.deactivated) throw errors.invalidChannelId();
    const sub = await getSubscription(ctx.db, user.id, streamId);
    if (!canJoinStream({ user_id: user.id, role: user.role, realm_id: realm.id }, stream, sub?.active === true)) throw errors.invalidChannelId();
  }
  await ctx.commands.run(metadataOf(meta), async () => ({
    // Per-user topic preferences are last-writer-wins; no version to check.
    appends: [{
      streamId: `user-topics-${user.id}`,
      expectedVersion: undefined,
      events: [{
        type: 'UserTopicPolicySet',
        data: { user_id: user.id, stream_id: streamId, topic, visibility_policy: policy, last_updated: Math.floor(meta.now.getTime() / 1000) },
      }],
    }],
    result: undefined,
  }));
}

/**
 * The subscriptions a new account gets: one append per default channel of the realm. For the
 * account-creation command to include in its own appends (same transaction as UserCreated).
 */
export async function defaultStreamSubscriptions(db: Db, realmId: number, userId: number, streamIds?: readonly number[]): Promise<StreamAppend[]> {
  // `streamIds` (an invitation's channels) replace the realm's default channels.
  if (streamIds !== undefined && streamIds.length === 0) return [];
  let query = db.selectFrom('streams').select('id').where('realm_id', '=', realmId).where('deactivated', '=', false);
  query = streamIds === undefined ? query.where('is_default', '=', true) : query.where('id', 'in', [...streamIds]);
  const defaults = await query.orderBy('name').execute();
  const used = new Set<string>();
  return defaults.map((stream, index) => {
    const color = pickColor(used, index);
    used.add(color);
    return {
      streamId: subscriptionStream(stream.id, userId),
      expectedVersion: -1,
      events: [{ type: 'UserSubscribed', data: { stream_id: stream.id, user_id: userId, color } }],
    };
  });
}

export interface InitialChannel {
  name: string;
  description: string;
  invite_only: boolean;
  is_default: boolean;
}

/**
 * Creates a channel with its first subscribers, unless a channel of that name was ever created in
 * the organization (the name's reservation stream exists): a rerun, or a second process starting at
 * the same moment, creates nothing and gets undefined.
 */
export async function createChannelOnce(
  ctx: ServiceContext,
  meta: RequestMeta,
  realm: RealmRow,
  creator: UserRow,
  spec: InitialChannel,
  subscribers: UserRow[],
): Promise<number | undefined> {
  const name = checkStreamName(spec.name);
  const streamId = await ctx.commands.nextId('stream_id_seq');
  const rendered = await renderDescription(ctx, spec.description, realm);
  const removeGroup = await defaultRemoveSubscribersGroup(ctx.db, realm.id);
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const claimed = await ctx.db.selectFrom('events').select('stream_version').where('stream_id', '=', nameStream(realm.id, name)).limit(1).executeTakeFirst();
    if (claimed) return { appends: [], result: undefined };
    const created = decideCreateStream({
      type: 'CreateStream',
      actor: actorOf(creator, realm, meta.now),
      realm: realmSettingsOf(realm, false),
      stream_id: streamId,
      realm_id: realm.id,
      now: Math.floor(meta.now.getTime() / 1000),
      name,
      description: spec.description,
      rendered_description: rendered,
      invite_only: spec.invite_only,
      is_web_public: false,
      history_public_to_subscribers: undefined,
      stream_post_policy: 1,
      message_retention_days: undefined,
      can_remove_subscribers_group: removeGroup,
      is_default: spec.is_default,
    });
    const reservation: StreamNameReserved = { type: 'StreamNameReserved', data: { realm_id: realm.id, name, stream_id: streamId } };
    const appends: StreamAppend[] = [
      { streamId: nameStream(realm.id, name), expectedVersion: -1, events: [reservation] },
      { streamId: channelStream(streamId), expectedVersion: -1, events: [created] },
    ];
    for (const user of subscribers) {
      const used = new Set((await subscriptionsOfUser(ctx.db, user.id)).filter((s) => s.active).map((s) => s.color));
      appends.push({
        streamId: subscriptionStream(streamId, user.id),
        expectedVersion: -1,
        events: [{ type: 'UserSubscribed', data: { stream_id: streamId, user_id: user.id, color: pickColor(used, used.size) } }],
      });
    }
    return { appends, result: streamId };
  });
  return result;
}
