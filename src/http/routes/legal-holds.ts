import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamsSpec } from '../params.js';
import { listLegalHolds, setLegalHold, type HoldScope } from '../../services/legal-holds.js';
import { errors } from '../../domain/errors.js';
import { Role } from '../../domain/roles.js';
import type { AppServices } from '../services.js';
import { eraseUser, type ErasedMessages } from '../../services/erasure.js';

interface HoldParams {
  scope: HoldScope;
  id: number;
  reason?: string;
}

const holdParams: ParamsSpec = {
  properties: { scope: { type: 'string', enum: ['channel', 'user'] }, id: { type: 'integer' }, reason: { type: 'string', maxLength: 1000 } },
  required: ['scope', 'id'],
};

interface EraseParams {
  user_id: number;
  messages: ErasedMessages;
  reason?: string;
}

/**
 * Our extensions (docs/FORGETTING.md), the forgetting area: owners put a channel or a person on
 * legal hold (nothing of theirs is shredded meanwhile), and erase a person.
 */
export default async function legalHoldRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/legal_holds',
    params: { properties: {} },
    handler: async ({ user, realm }) => {
      if (user.role !== Role.OWNER) throw errors.mustBeOwner();
      return { legal_holds: await listLegalHolds(ctx.db, realm.id) };
    },
  });

  defineRoute<HoldParams>(app, {
    method: 'POST',
    url: '/legal_holds',
    params: holdParams,
    handler: async ({ params, user, realm, meta }) => {
      await setLegalHold(ctx, meta, user, realm.id, { scope: params.scope, subjectId: params.id, held: true, reason: params.reason });
    },
  });

  defineRoute<HoldParams>(app, {
    method: 'DELETE',
    url: '/legal_holds',
    params: holdParams,
    handler: async ({ params, user, realm, meta }) => {
      await setLegalHold(ctx, meta, user, realm.id, { scope: params.scope, subjectId: params.id, held: false, reason: params.reason });
    },
  });

  // The real server has no API for this (only its delete_user management command).
  defineRoute<EraseParams>(app, {
    method: 'POST',
    url: '/users/:user_id/erase',
    params: {
      properties: {
        user_id: { type: 'integer' },
        messages: { type: 'string', enum: ['shred', 'keep'], default: 'keep' },
        reason: { type: 'string', maxLength: 1000 },
      },
      required: ['user_id'],
    },
    handler: async ({ params, user, meta }) => {
      if (user.role !== Role.OWNER) throw errors.mustBeOwner();
      return { ...(await eraseUser(ctx, meta, user, params.user_id, { messages: params.messages, reason: params.reason })) };
    },
  });
}
