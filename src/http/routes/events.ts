import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ClientGone, RegisterParams } from '../../event-queue/queue-service.js';
import type { AppServices } from '../services.js';
import { registerSpectator } from '../../event-queue/spectator-state.js';

/** Registration options are stored in the log with the queue: each is bounded (docs/DECISIONS.md, "Limits"). */
const eventTypeList = { type: 'array', maxItems: 200, items: { type: 'string', maxLength: 64 } } as const;

const registerParams = {
  event_types: eventTypeList,
  fetch_event_types: eventTypeList,
  // Its terms are checked by normalizeNarrow.
  narrow: { type: 'array' },
  all_public_streams: { type: 'boolean' },
  include_subscribers: { anyOf: [{ type: 'boolean' }, { type: 'string', enum: ['partial'] }] },
  client_capabilities: { type: 'object', maxProperties: 32, propertyNames: { maxLength: 64 }, additionalProperties: { type: 'boolean' } },
  apply_markdown: { type: 'boolean' },
  client_gravatar: { type: 'boolean' },
  slim_presence: { type: 'boolean' },
  queue_lifespan_secs: { type: 'integer', minimum: 0 },
  presence_last_update_id: { type: 'integer' },
  presence_history_limit_days: { type: 'integer' },
} as const;

/** Event queues: POST /register, GET and DELETE /events. */
export default async function eventRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { queues } = services;

  defineRoute<RegisterParams>(app, {
    method: 'POST',
    url: '/register',
    params: { properties: { ...registerParams } },
    handler: async ({ params, user, realm, meta }) => queues.register(meta, user, realm, params),
    // The web app's logged-out view: the state a spectator may see, without an event queue.
    spectator: async ({ params, realm }) => registerSpectator(services.ctx, realm, params),
  });

  defineRoute<{ queue_id?: string; last_event_id?: number; dont_block?: boolean } & RegisterParams>(app, {
    method: 'GET',
    url: '/events',
    rateLimit: false,
    params: {
      properties: {
        queue_id: { type: 'string' },
        last_event_id: { type: 'integer' },
        dont_block: { type: 'boolean' },
        ...registerParams,
      },
    },
    handler: async ({ params, user, realm, meta, request }) => {
      // A client that leaves while its poll is blocked frees the poll at once. Listened to only while
      // blocked (an AbortController per poll made a DOMException, with its stack, at every poll's end).
      const clientGone: ClientGone = (leave) => {
        request.raw.once('close', leave);
        return () => request.raw.off('close', leave);
      };
      // Without a queue id, the parameters register a new queue (as the real server allows) and the
      // answer is that queue's first events with its id, not the /register state.
      if (params.queue_id === undefined) {
        const registered = await queues.register(meta, user, realm, { ...params, fetch_event_types: [] });
        const queueId = String(registered.queue_id);
        const polled = await queues.getEvents(user, realm, queueId, -1, params.dont_block ?? false, clientGone);
        return { ...polled, queue_id: queueId };
      }
      return queues.getEvents(user, realm, params.queue_id, params.last_event_id, params.dont_block ?? false, clientGone);
    },
  });

  defineRoute<{ queue_id: string }>(app, {
    method: 'DELETE',
    url: '/events',
    params: { properties: { queue_id: { type: 'string' } }, required: ['queue_id'] },
    handler: async ({ params, user, meta }) => {
      await queues.deleteQueue(meta, user, params.queue_id);
    },
  });
}
