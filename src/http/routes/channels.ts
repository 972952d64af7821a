import { accessUserById } from '../../services/users.js';
import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { Role, isAdminRole } from '../../domain/roles.js';
import { MAX_STREAM_DESCRIPTION_LENGTH, MAX_TOPIC_LENGTH, checkVisibilityPolicy } from '../../domain/channels/decider.js';
import {
  formatStream,
  gatherSubscriptions,
  getActiveStreamByName,
  getStreamById,
  getSubscription,
  isDbId,
  listActiveStreams,
  streamTopics,
  subscribersByStream,
  subscriptionsOfUser,
  weeklyTraffic,
} from '../../read/channels.js';
import {
  archiveStream,
  setSubscriptionProperties,
  setUserTopic,
  subscribe,
  unsubscribe,
  checkOwnUnsubscribe,
  updateStream,
  type SubscribeInput,
  type UpdateStreamInput,
} from '../../services/channels.js';
import { canReadStreamContent, canSeeStreamMetadata, canSeeSubscribers, streamHistoryIsProtected, type StreamRow } from '../../visibility.js';
import { getUserById } from '../../read/users.js';
import type { ParamSchema } from '../params.js';
import type { AppServices } from '../services.js';

const principals: ParamSchema = { anyOf: [{ type: 'array', items: { type: 'integer' } }, { type: 'array', items: { type: 'string' } }] };
const retention: ParamSchema = { anyOf: [{ type: 'integer' }, { type: 'string' }] };
const streamPostPolicy: ParamSchema = { type: 'integer', enum: [1, 2, 3, 4] };
const streamIdParam = { stream_id: { type: 'integer' } } as const;
const adminsOnly = (user: { role: number }) => {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
};
const nowSeconds = () => Math.floor(Date.now() / 1000);

export default async function channelRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const viewerOf = (user: { id: number; role: number; realm_id: number }) => ({ user_id: user.id, role: user.role, realm_id: user.realm_id });

  /** A channel the viewer may know about; anything else is "Invalid channel ID". */
  async function visibleStream(user: { id: number; role: number; realm_id: number }, streamId: number): Promise<{ stream: StreamRow; subscribed: boolean }> {
    const stream = await getStreamById(ctx.db, streamId);
    if (!stream || stream.deactivated) throw errors.invalidChannelId();
    const subscribed = (await getSubscription(ctx.db, user.id, streamId))?.active === true;
    if (!canSeeStreamMetadata(viewerOf(user), stream, subscribed)) throw errors.invalidChannelId();
    return { stream, subscribed };
  }

  defineRoute<{
    include_public?: boolean;
    include_web_public?: boolean;
    include_subscribed?: boolean;
    include_all_active?: boolean;
    include_default?: boolean;
    include_owner_subscribed?: boolean;
  }>(app, {
    method: 'GET',
    url: '/streams',
    params: {
      properties: {
        include_public: { type: 'boolean' },
        include_web_public: { type: 'boolean' },
        include_subscribed: { type: 'boolean' },
        include_all_active: { type: 'boolean' },
        include_default: { type: 'boolean' },
        include_owner_subscribed: { type: 'boolean' },
      },
    },
    handler: async ({ params, user, realm }) => {
      if (params.include_all_active && !isAdminRole(user.role)) throw errors.badRequest('User not authorized for this query');
      const streams = await listActiveStreams(ctx.db, realm.id);
      const mine = new Set((await subscriptionsOfUser(ctx.db, user.id)).filter((s) => s.active).map((s) => s.stream_id));
      const owners = new Set<number>();
      if (params.include_owner_subscribed && user.is_bot && user.bot_owner_id !== null) {
        for (const s of await subscriptionsOfUser(ctx.db, user.bot_owner_id)) if (s.active) owners.add(s.stream_id);
      }
      // Guests cannot read public channels they are not in.
      const includePublic = (params.include_public ?? true) && user.role !== Role.GUEST;
      const chosen = streams.filter((s) =>
        (params.include_all_active ?? false) ||
        (includePublic && !s.invite_only) ||
        ((params.include_web_public ?? false) && s.is_web_public) ||
        ((params.include_subscribed ?? true) && mine.has(s.id)) ||
        ((params.include_default ?? false) && s.is_default) ||
        owners.has(s.id),
      );
      const traffic = await weeklyTraffic(ctx.db, chosen, nowSeconds());
      return {
        streams: chosen.map((s) => {
          const out = formatStream(s, traffic.get(s.id) ?? null);
          if (params.include_default) out.is_default = s.is_default;
          return out;
        }),
      };
    },
  });

  defineRoute<{ stream_id: number }>(app, {
    method: 'GET',
    url: '/streams/:stream_id',
    params: { properties: { ...streamIdParam }, required: ['stream_id'] },
    handler: async ({ params, user }) => {
      const { stream } = await visibleStream(user, params.stream_id);
      const traffic = await weeklyTraffic(ctx.db, [stream], nowSeconds());
      return { stream: formatStream(stream, traffic.get(stream.id) ?? null) };
    },
  });

  defineRoute<{ stream: string }>(app, {
    method: 'GET',
    url: '/get_stream_id',
    params: { properties: { stream: { type: 'string' } }, required: ['stream'] },
    handler: async ({ params, user, realm }) => {
      const stream = await getActiveStreamByName(ctx.db, realm.id, params.stream.trim());
      const subscribed = stream ? (await getSubscription(ctx.db, user.id, stream.id))?.active === true : false;
      if (!stream || !canSeeStreamMetadata(viewerOf(user), stream, subscribed)) throw errors.badRequest(`Invalid channel name '${params.stream}'`);
      return { stream_id: stream.id };
    },
  });

  defineRoute<{ stream_id: number }>(app, {
    method: 'GET',
    url: '/streams/:stream_id/members',
    params: { properties: { ...streamIdParam }, required: ['stream_id'] },
    handler: async ({ params, user }) => {
      const { stream, subscribed } = await visibleStream(user, params.stream_id);
      if (!canSeeSubscribers(viewerOf(user), stream, subscribed)) {
        throw errors.badRequest(user.role === Role.GUEST ? 'Not allowed for guest users' : 'Unable to retrieve subscribers for private channel');
      }
      const subscribers = await subscribersByStream(ctx.db, [stream.id]);
      return { subscribers: subscribers.get(stream.id) ?? [] };
    },
  });

  defineRoute<{ stream_id: number }>(app, {
    method: 'GET',
    url: '/users/me/:stream_id/topics',
    params: { properties: { ...streamIdParam }, required: ['stream_id'] },
    handler: async ({ params, user }) => {
      const stream = await getStreamById(ctx.db, params.stream_id);
      if (!stream || stream.deactivated) throw errors.invalidChannelId();
      const subscribed = (await getSubscription(ctx.db, user.id, stream.id))?.active === true;
      if (!canReadStreamContent(viewerOf(user), stream, subscribed)) throw errors.invalidChannelId();
      return { topics: await streamTopics(ctx.db, stream.id, streamHistoryIsProtected(stream) ? user.id : null) };
    },
    // access_web_public_stream: a web-public channel of the organization, with its whole history.
    spectator: async ({ params, viewer }) => {
      const stream = await getStreamById(ctx.db, params.stream_id);
      if (!stream || !canReadStreamContent(viewer, stream, false)) throw errors.invalidChannelId();
      return { topics: await streamTopics(ctx.db, stream.id, null) };
    },
  });

  defineRoute<{ user_id: number; stream_id: number }>(app, {
    method: 'GET',
    url: '/users/:user_id/subscriptions/:stream_id',
    params: { properties: { user_id: { type: 'integer' }, ...streamIdParam }, required: ['user_id', 'stream_id'] },
    handler: async ({ params, user, realm }) => {
      if (!isDbId(params.user_id)) throw errors.noSuchUser();
      // As the real server's access_user_by_id for reading: an active human the caller may access.
      const target = await accessUserById(ctx.db, realm, user, params.user_id, { forAdmin: false });
      const { stream, subscribed } = await visibleStream(user, params.stream_id);
      if (!canSeeSubscribers(viewerOf(user), stream, subscribed)) throw errors.invalidChannelId();
      return { is_subscribed: (await getSubscription(ctx.db, target.id, stream.id))?.active === true };
    },
  });

  defineRoute<{ include_subscribers?: boolean }>(app, {
    method: 'GET',
    url: '/users/me/subscriptions',
    params: { properties: { include_subscribers: { type: 'boolean' } } },
    handler: async ({ params, user }) => {
      const lists = await gatherSubscriptions(ctx.db, viewerOf(user), params.include_subscribers ?? false, nowSeconds());
      return { subscriptions: lists.subscriptions };
    },
  });

  defineRoute<SubscribeInput>(app, {
    method: 'POST',
    url: '/users/me/subscriptions',
    params: {
      properties: {
        subscriptions: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, description: { type: 'string', maxLength: MAX_STREAM_DESCRIPTION_LENGTH }, color: { type: 'string' } },
            required: ['name'],
          },
        },
        principals,
        authorization_errors_fatal: { type: 'boolean' },
        announce: { type: 'boolean' },
        invite_only: { type: 'boolean' },
        is_web_public: { type: 'boolean' },
        is_default_stream: { type: 'boolean' },
        history_public_to_subscribers: { type: 'boolean' },
        stream_post_policy: streamPostPolicy,
        message_retention_days: retention,
        can_remove_subscribers_group: { type: 'integer' },
      },
      required: ['subscriptions'],
    },
    handler: async ({ params, user, realm, meta }) => {
      return { ...(await subscribe(ctx, meta, user, realm, params)) };
    },
  });

  defineRoute<{ subscriptions: string[]; principals?: Array<number | string> }>(app, {
    method: 'DELETE',
    url: '/users/me/subscriptions',
    params: { properties: { subscriptions: { type: 'array', items: { type: 'string' } }, principals }, required: ['subscriptions'] },
    handler: async ({ params, user, realm, meta }) => unsubscribe(ctx, meta, user, realm, params.subscriptions, params.principals),
  });

  defineRoute<{ add?: SubscribeInput['subscriptions']; delete?: string[] }>(app, {
    method: 'PATCH',
    url: '/users/me/subscriptions',
    params: {
      properties: {
        add: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, description: { type: 'string', maxLength: MAX_STREAM_DESCRIPTION_LENGTH }, color: { type: 'string' } }, required: ['name'] } },
        delete: { type: 'array', items: { type: 'string' } },
      },
    },
    handler: async ({ params, user, realm, meta }) => {
      const add = params.add ?? [];
      const remove = params.delete ?? [];
      if (add.length === 0 && remove.length === 0) throw errors.badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      if (add.length > 0 && remove.length > 0) await checkOwnUnsubscribe(ctx, user, realm, remove);
      const added = add.length > 0 ? await subscribe(ctx, meta, user, realm, { subscriptions: add }) : { subscribed: {}, already_subscribed: {} };
      const removed = remove.length > 0 ? await unsubscribe(ctx, meta, user, realm, remove, undefined) : { removed: [], not_removed: [] };
      return { ...added, ...removed };
    },
  });

  defineRoute<{ subscription_data: Array<{ stream_id: number; property: string; value: unknown }> }>(app, {
    method: ['POST', 'PATCH'],
    url: '/users/me/subscriptions/properties',
    params: {
      properties: {
        subscription_data: {
          type: 'array',
          items: {
            type: 'object',
            properties: { stream_id: { type: 'integer' }, property: { type: 'string' } },
            required: ['stream_id', 'property', 'value'],
          },
        },
      },
      required: ['subscription_data'],
    },
    handler: async ({ params, user, realm, meta }) => {
      await setSubscriptionProperties(ctx, meta, user, realm, params.subscription_data);
    },
  });

  defineRoute<UpdateStreamInput & { stream_id: number }>(app, {
    method: 'PATCH',
    url: '/streams/:stream_id',
    params: {
      properties: {
        ...streamIdParam,
        description: { type: 'string', maxLength: MAX_STREAM_DESCRIPTION_LENGTH },
        new_name: { type: 'string' },
        is_private: { type: 'boolean' },
        is_web_public: { type: 'boolean' },
        history_public_to_subscribers: { type: 'boolean' },
        is_default_stream: { type: 'boolean' },
        stream_post_policy: streamPostPolicy,
        is_announcement_only: { type: 'boolean' },
        message_retention_days: retention,
        can_remove_subscribers_group: { type: 'integer' },
      },
      required: ['stream_id'],
    },
    handler: async ({ params, user, realm, meta }) => {
      const { stream_id, ...input } = params;
      await updateStream(ctx, meta, user, realm, stream_id, input);
    },
  });

  defineRoute<{ stream_id: number }>(app, {
    method: 'DELETE',
    url: '/streams/:stream_id',
    params: { properties: { ...streamIdParam }, required: ['stream_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await archiveStream(ctx, meta, user, realm, params.stream_id);
    },
  });

  // The dedicated default-channel endpoints (before is_default_stream existed on PATCH /streams).
  defineRoute<{ stream_id: number }>(app, {
    method: 'POST',
    url: '/default_streams',
    // Administrators only, refused before the parameters are read (require_realm_admin).
    allow: adminsOnly,
    params: { properties: { ...streamIdParam }, required: ['stream_id'] },
    handler: async ({ params, user, realm, meta }) => {
      const stream = await getStreamById(ctx.db, params.stream_id);
      if (stream && stream.realm_id === realm.id && !stream.deactivated && stream.invite_only) {
        // Only someone in the private channel learns that it is one.
        const subscribed = (await getSubscription(ctx.db, user.id, stream.id))?.active === true;
        throw subscribed ? errors.badRequest('Private channels cannot be made default.') : errors.invalidChannelId();
      }
      await updateStream(ctx, meta, user, realm, params.stream_id, { is_default_stream: true });
    },
  });

  defineRoute<{ stream_id: number }>(app, {
    method: 'DELETE',
    url: '/default_streams',
    allow: adminsOnly,
    params: { properties: { ...streamIdParam }, required: ['stream_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await updateStream(ctx, meta, user, realm, params.stream_id, { is_default_stream: false });
    },
  });

  defineRoute<{ stream_id: number; topic: string; visibility_policy: number }>(app, {
    method: 'POST',
    url: '/user_topics',
    params: {
      properties: {
        stream_id: { type: 'integer' },
        topic: { type: 'string', maxLength: MAX_TOPIC_LENGTH },
        visibility_policy: { type: 'integer' },
      },
      required: ['stream_id', 'topic', 'visibility_policy'],
    },
    handler: async ({ params, user, realm, meta }) => {
      checkVisibilityPolicy(params.visibility_policy);
      await setUserTopic(ctx, meta, user, realm, params.stream_id, params.topic, params.visibility_policy);
    },
  });
}
