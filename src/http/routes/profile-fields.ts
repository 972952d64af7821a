import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { isAdminRole } from '../../domain/roles.js';
import { deleteProfileField, setProfileData, updateProfileField } from '../../services/profile-fields.js';
import type { AppServices } from '../services.js';

/** Editing and deleting custom profile fields, and clearing one's own values (creation and ordering: users.ts). */
export default async function profileFieldRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ field_id: number; name?: string; hint?: string; field_data?: unknown; display_in_profile_summary?: boolean; required?: boolean }>(app, {
    method: 'PATCH',
    url: '/realm/profile_fields/:field_id',
    params: {
      properties: {
        field_id: { type: 'integer' },
        name: { type: 'string' },
        hint: { type: 'string' },
        field_data: { type: 'object' },
        display_in_profile_summary: { type: 'boolean' },
        required: { type: 'boolean' },
      },
      required: ['field_id'],
    },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      await updateProfileField(ctx, meta, params.field_id, params);
    },
  });

  defineRoute<{ field_id: number }>(app, {
    method: 'DELETE',
    url: '/realm/profile_fields/:field_id',
    params: { properties: { field_id: { type: 'integer' } }, required: ['field_id'] },
    handler: async ({ params, user, meta }) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
      await deleteProfileField(ctx, meta, params.field_id);
    },
  });

  defineRoute<{ data: number[] }>(app, {
    method: 'DELETE',
    url: '/users/me/profile_data',
    params: { properties: { data: { type: 'array', items: { type: 'integer' }, maxItems: 1000 } }, required: ['data'] },
    handler: async ({ params, user, meta }) => {
      // The real server's remove_user_custom_profile_data is @human_users_only.
      if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
      await setProfileData(ctx, meta, user.id, params.data.map((id) => ({ id, value: null })));
    },
  });
}
