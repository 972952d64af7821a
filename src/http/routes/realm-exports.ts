import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { isAdminRole, Role } from '../../domain/roles.js';
import type { UserRow } from '../../read/users.js';
import { listRealmExports } from '../../read/realm-exports.js';
import { deleteRealmExport, requestRealmExport, resumePendingExports, runRealmExport } from '../../services/realm-exports.js';
import { uploadStorage } from '../../services/upload-crypto.js';
import type { AppServices } from '../services.js';

/**
 * Our export is the whole log (every private message too), which the real server lets only
 * owners export: members get its require_realm_admin error, administrators its owner error.
 */
function requireOwner(user: UserRow): void {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
  if (user.role !== Role.OWNER) throw errors.mustBeOwner();
}

/** POST/GET /export/realm and DELETE /export/realm/{export_id} (under /api/v1). */
export default async function realmExportRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const storage = uploadStorage(ctx);
  const running = new Set<Promise<unknown>>();
  const inBackground = (work: Promise<unknown>) => {
    const tracked = work.catch((error: unknown) => app.log.error({ err: error }, 'organization export failed')).finally(() => running.delete(tracked));
    running.add(tracked);
  };
  // Exports cut off by a restart run again (docs/DECISIONS.md); closing waits for those under way.
  app.addHook('onReady', async () => {
    inBackground(resumePendingExports(ctx, storage, (error, exportId) => app.log.error({ err: error, export_id: exportId }, 'organization export failed')));
  });
  app.addHook('onClose', async () => {
    await Promise.all([...running]);
  });

  defineRoute(app, {
    method: 'POST',
    url: '/export/realm',
    handler: async ({ user, meta }) => {
      requireOwner(user);
      const id = await requestRealmExport(ctx, meta, user.id);
      inBackground(runRealmExport(ctx, storage, meta.realmId, id));
      return { id };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/export/realm',
    handler: async ({ user, realm }) => {
      requireOwner(user);
      return { exports: await listRealmExports(ctx.db, realm.id, realm.url) };
    },
  });

  defineRoute<{ export_id: number }>(app, {
    method: 'DELETE',
    url: '/export/realm/:export_id',
    params: { properties: { export_id: { type: 'integer' } }, required: ['export_id'] },
    handler: async ({ params, user, meta }) => {
      requireOwner(user);
      await deleteRealmExport(ctx, storage, meta, params.export_id);
    },
  });
}
