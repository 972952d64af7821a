import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamsSpec } from '../params.js';
import { listLegalHolds, setLegalHold, type HoldScope } from '../../services/legal-holds.js';
import { errors } from '../../domain/errors.js';
import { Role } from '../../domain/roles.js';
import type { AppServices } from '../services.js';

interface HoldParams {
  scope: HoldScope;
  id: number;
  reason?: string;
}

const holdParams: ParamsSpec = {
  properties: { scope: { type: 'string', enum: ['channel', 'user'] }, id: { type: 'integer' }, reason: { type: 'string', maxLength: 1000 } },
  required: ['scope', 'id'],
};

/** Our extension (docs/FORGETTING.md): owners put a channel or a person on legal hold; nothing of theirs is shredded meanwhile. */
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
}
