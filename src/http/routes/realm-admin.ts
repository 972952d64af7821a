import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamSchema } from '../params.js';
import { REALM_SETTINGS, type RealmSettingSpec } from '../../domain/realm-admin/settings.js';
import { updateRealmSettings } from '../../services/realm-settings.js';
import { addRealmDomain, changeRealmDomain, listRealmDomains, removeRealmDomain } from '../../services/realm-domains.js';
import { errors } from '../../domain/errors.js';
import { Role } from '../../domain/roles.js';
import type { UserRow } from '../../read/users.js';
import { isAdminRole } from '../../domain/roles.js';
import { changeDefaultStreamGroups, requireDefaultStreamGroup, resolveChannelNames } from '../../services/default-stream-groups.js';
import type { AppServices } from '../services.js';

const INT_OR_STRING: ParamSchema = { anyOf: [{ type: 'integer' }, { type: 'string' }] };
const NUMBER_OR_STRING: ParamSchema = { anyOf: [{ type: 'number' }, { type: 'string' }] };
const JSON_VALUE: ParamSchema = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'array' }, { type: 'object' }] };

/** How each organization setting arrives; the decider checks values and gives the real server's errors. */
function paramFor(spec: RealmSettingSpec): ParamSchema {
  switch (spec.kind) {
    case 'bool': return { type: 'boolean' };
    case 'text': case 'language': return { type: 'string' };
    // JSON-encoded on the real server (`"https://..."`, `"default"`); any JSON value arrives, the
    // decider refuses what is not a string with the real server's words.
    case 'jitsi': return JSON_VALUE;
    case 'choice': case 'channel': case 'group': return { type: 'integer' };
    // Converted from its text by the decider, which names any bad value.
    case 'count': return NUMBER_OR_STRING;
    case 'limit': case 'retention': return INT_OR_STRING;
    case 'auth': return { type: 'object', maxProperties: 50 };
  }
}

const settingParams: Record<string, ParamSchema> = Object.fromEntries(
  Object.entries(REALM_SETTINGS).map(([name, spec]) => [name, paramFor(spec)]),
);

function requireOwner(user: UserRow): void {
  if (user.role !== Role.OWNER) throw errors.mustBeOwner();
}

function requireAdmin(user: UserRow): void {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
}

export default async function realmAdminRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<Record<string, unknown>>(app, {
    method: 'PATCH',
    url: '/realm',
    // Administrators only, refused before any parameter is read, as the real server's decorator does.
    allow: requireAdmin,
    params: { properties: settingParams },
    handler: async ({ params, user, meta }) => updateRealmSettings(ctx, meta, user, params),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/realm/domains',
    handler: async ({ realm }) => ({ domains: await listRealmDomains(ctx.db, realm.id) }),
  });

  // Changing who may sign up is the owners' (help center: restrict account creation).
  defineRoute<{ domain: string; allow_subdomains: boolean }>(app, {
    method: 'POST',
    url: '/realm/domains',
    allow: requireOwner,
    params: { properties: { domain: { type: 'string', maxLength: 1000 }, allow_subdomains: { type: 'boolean' } }, required: ['domain', 'allow_subdomains'] },
    handler: async ({ params, meta }) => {
      return { new_domain: await addRealmDomain(ctx, meta, params.domain, params.allow_subdomains) };
    },
  });

  defineRoute<{ domain: string; allow_subdomains: boolean }>(app, {
    method: 'PATCH',
    url: '/realm/domains/:domain',
    allow: requireOwner,
    params: { properties: { domain: { type: 'string', maxLength: 1000 }, allow_subdomains: { type: 'boolean' } }, required: ['domain', 'allow_subdomains'] },
    handler: async ({ params, meta }) => {
      await changeRealmDomain(ctx, meta, params.domain, params.allow_subdomains);
    },
  });

  defineRoute<{ domain: string }>(app, {
    method: 'DELETE',
    url: '/realm/domains/:domain',
    allow: requireOwner,
    params: { properties: { domain: { type: 'string', maxLength: 1000 } }, required: ['domain'] },
    handler: async ({ params, meta }) => {
      await removeRealmDomain(ctx, meta, params.domain);
    },
  });

  const streamNames: ParamSchema = { type: 'array', items: { type: 'string', maxLength: 200 }, maxItems: 1000 };

  defineRoute<{ group_name: string; description: string; stream_names: string[] }>(app, {
    method: 'POST',
    url: '/default_stream_groups/create',
    allow: requireAdmin,
    params: {
      properties: { group_name: { type: 'string' }, description: { type: 'string', maxLength: 1024 }, stream_names: streamNames },
      required: ['group_name', 'description', 'stream_names'],
    },
    handler: async ({ params, user, meta }) => {
      const channels = await resolveChannelNames(ctx.db, user, params.stream_names);
      const group_id = await ctx.commands.nextId('default_stream_group_id_seq');
      await changeDefaultStreamGroups(ctx, meta, { type: 'CreateDefaultStreamGroup', group_id, name: params.group_name, description: params.description, channels });
    },
  });

  defineRoute<{ group_id: number; new_group_name?: string; new_description?: string }>(app, {
    method: 'PATCH',
    url: '/default_stream_groups/:group_id',
    allow: requireAdmin,
    params: {
      properties: { group_id: { type: 'integer' }, new_group_name: { type: 'string' }, new_description: { type: 'string', maxLength: 1024 } },
      required: ['group_id'],
    },
    handler: async ({ params, meta }) => {
      await changeDefaultStreamGroups(ctx, meta, { type: 'UpdateDefaultStreamGroupInfo', ...params });
    },
  });

  defineRoute<{ group_id: number; op: string; stream_names: string[] }>(app, {
    method: 'PATCH',
    url: '/default_stream_groups/:group_id/streams',
    allow: requireAdmin,
    params: { properties: { group_id: { type: 'integer' }, op: { type: 'string' }, stream_names: streamNames }, required: ['group_id', 'op', 'stream_names'] },
    handler: async ({ params, user, meta }) => {
      await requireDefaultStreamGroup(ctx.db, meta.realmId, params.group_id);
      const channels = await resolveChannelNames(ctx.db, user, params.stream_names);
      await changeDefaultStreamGroups(ctx, meta, { type: 'UpdateDefaultStreamGroupStreams', group_id: params.group_id, op: params.op, channels });
    },
  });

  defineRoute<{ group_id: number }>(app, {
    method: 'DELETE',
    url: '/default_stream_groups/:group_id',
    allow: requireAdmin,
    params: { properties: { group_id: { type: 'integer' } }, required: ['group_id'] },
    handler: async ({ params, meta }) => {
      await changeDefaultStreamGroups(ctx, meta, { type: 'RemoveDefaultStreamGroup', group_id: params.group_id });
    },
  });
}
