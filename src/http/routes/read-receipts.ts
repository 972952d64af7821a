import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { DEFAULT_REALM_PROPERTIES } from '../../domain/realm/defaults.js';
import { requireVisibleMessage } from '../../services/messages.js';
import { readReceiptUserIds } from '../../read/read-receipts.js';
import type { AppServices } from '../services.js';

export default async function readReceiptRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  // The message is checked first, as on the real server: a message the user cannot see answers
  // "Invalid message(s)" whatever the organization's setting.
  defineRoute<{ message_id: number }>(app, {
    method: 'GET',
    url: '/messages/:message_id/read_receipts',
    params: { properties: { message_id: { type: 'integer' } }, required: ['message_id'] },
    handler: async ({ params, user, realm }) => {
      const message = await requireVisibleMessage(ctx.db, user, params.message_id);
      const properties = { ...DEFAULT_REALM_PROPERTIES, ...(realm.properties as Record<string, unknown>) };
      if (properties.enable_read_receipts !== true) throw errors.badRequest('Read receipts are disabled in this organization.');
      return { user_ids: await readReceiptUserIds(ctx.db, user.id, message) };
    },
  });
}
