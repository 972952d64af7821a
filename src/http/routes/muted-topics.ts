import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { MAX_TOPIC_LENGTH } from '../../domain/channels/decider.js';
import { updateMutedTopic, type MutedTopicChange } from '../../services/muted-topics.js';
import type { AppServices } from '../services.js';

export default async function mutedTopicRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<MutedTopicChange>(app, {
    method: 'PATCH',
    url: '/users/me/subscriptions/muted_topics',
    params: {
      properties: {
        op: { type: 'string', enum: ['add', 'remove'] },
        topic: { type: 'string', maxLength: MAX_TOPIC_LENGTH },
        stream: { type: 'string' },
        stream_id: { type: 'integer' },
      },
      required: ['op', 'topic'],
    },
    handler: async ({ params, user, realm, meta }) => {
      await updateMutedTopic(ctx, meta, user, realm, params);
    },
  });
}
