import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamSchema } from '../params.js';
import { REALM_SETTINGS, type RealmSettingSpec } from '../../domain/realm-admin/settings.js';
import { updateRealmSettings } from '../../services/realm-settings.js';
import type { AppServices } from '../services.js';

const INT_OR_STRING: ParamSchema = { anyOf: [{ type: 'integer' }, { type: 'string' }] };

/** How each organization setting arrives; the decider checks values and gives the real server's errors. */
function paramFor(spec: RealmSettingSpec): ParamSchema {
  switch (spec.kind) {
    case 'bool': return { type: 'boolean' };
    case 'text': case 'language': case 'jitsi': return { type: 'string' };
    case 'choice': case 'count': case 'channel': case 'group': return { type: 'integer' };
    case 'limit': case 'retention': return INT_OR_STRING;
    case 'auth': return { type: 'object', maxProperties: 50 };
  }
}

const settingParams: Record<string, ParamSchema> = Object.fromEntries(
  Object.entries(REALM_SETTINGS).map(([name, spec]) => [name, paramFor(spec)]),
);

export default async function realmAdminRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<Record<string, unknown>>(app, {
    method: 'PATCH',
    url: '/realm',
    params: { properties: settingParams },
    handler: async ({ params, user, meta }) => updateRealmSettings(ctx, meta, user, params),
  });
}
