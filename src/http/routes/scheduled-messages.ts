import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { listUndeliveredScheduledMessages } from '../../read/scheduled-messages.js';
import {
  deleteScheduledMessage,
  editScheduledMessage,
  scheduleMessage,
  type EditScheduledParams,
  type ScheduleParams,
} from '../../services/scheduled-messages.js';
import type { AppServices } from '../services.js';

const recipientType = { type: 'string', enum: ['direct', 'stream', 'private', 'channel'] } as const;
const recipients = { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'array' }] } as const;

export default async function scheduledMessageRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/scheduled_messages',
    handler: async ({ user }) => ({ scheduled_messages: await listUndeliveredScheduledMessages(ctx.db, user.id) }),
  });

  defineRoute<ScheduleParams>(app, {
    method: 'POST',
    url: '/scheduled_messages',
    params: {
      properties: {
        type: recipientType,
        to: recipients,
        topic: { type: 'string' },
        content: { type: 'string' },
        scheduled_delivery_timestamp: { type: 'integer' },
        read_by_sender: { type: 'boolean' },
      },
      required: ['type', 'to', 'content', 'scheduled_delivery_timestamp'],
    },
    handler: async ({ params, user, realm, meta }) => ({
      scheduled_message_id: await scheduleMessage(ctx, meta, user, realm, params),
    }),
  });

  defineRoute<EditScheduledParams & { scheduled_message_id: number }>(app, {
    method: 'PATCH',
    url: '/scheduled_messages/:scheduled_message_id',
    params: {
      properties: {
        scheduled_message_id: { type: 'integer' },
        type: recipientType,
        to: recipients,
        topic: { type: 'string' },
        content: { type: 'string' },
        scheduled_delivery_timestamp: { type: 'integer' },
      },
      required: ['scheduled_message_id'],
    },
    handler: async ({ params: { scheduled_message_id: id, ...changes }, user, realm, meta }) => {
      await editScheduledMessage(ctx, meta, user, realm, id, changes);
    },
  });

  defineRoute<{ scheduled_message_id: number }>(app, {
    method: 'DELETE',
    url: '/scheduled_messages/:scheduled_message_id',
    params: { properties: { scheduled_message_id: { type: 'integer' } }, required: ['scheduled_message_id'] },
    handler: async ({ params, user, meta }) => {
      await deleteScheduledMessage(ctx, meta, user, params.scheduled_message_id);
    },
  });
}
