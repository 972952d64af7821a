import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { Role } from '../../domain/roles.js';
import { deactivateRealm } from '../../services/realm-deactivation.js';
import type { AppServices } from '../services.js';

/** POST /realm/deactivate: owners only, as on the real server; only the server's operator reactivates (CLI). */
export default async function realmDeactivationRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute(app, {
    method: 'POST',
    url: '/realm/deactivate',
    handler: async ({ user, realm, meta }) => {
      if (user.role !== Role.OWNER) throw errors.mustBeOwner();
      await deactivateRealm(ctx, meta, realm.id);
    },
  });
}
