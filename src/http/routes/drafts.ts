import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { draftsDisabled, type DraftInput } from '../../domain/drafts/decider.js';
import { listDrafts } from '../../read/drafts.js';
import { createDrafts, deleteDraft, editDraft } from '../../services/drafts.js';
import type { AppServices } from '../services.js';
import type { UserRow } from '../../read/users.js';

/** Every /drafts route refuses first when the user turned draft synchronization off (as the real server does). */
function syncEnabled(user: UserRow): void {
  if (user.settings.enable_drafts_synchronization === false) throw draftsDisabled();
}

export default async function draftRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/drafts',
    allow: syncEnabled,
    handler: async ({ user }) => {
      const drafts = await listDrafts(ctx.db, user.id, 'oldest first');
      return { count: drafts.length, drafts };
    },
  });

  defineRoute<{ drafts?: DraftInput[] }>(app, {
    method: 'POST',
    url: '/drafts',
    params: { properties: { drafts: { type: 'array', items: { type: 'object' } } }, required: ['drafts'] },
    allow: syncEnabled,
    handler: async ({ params, user, meta }) => ({ ids: await createDrafts(ctx, meta, user.id, params.drafts ?? []) }),
  });

  defineRoute<{ draft_id: number; draft: DraftInput }>(app, {
    method: 'PATCH',
    url: '/drafts/:draft_id',
    params: { properties: { draft_id: { type: 'integer' }, draft: { type: 'object' } }, required: ['draft_id', 'draft'] },
    allow: syncEnabled,
    handler: async ({ params, user, meta }) => {
      await editDraft(ctx, meta, user.id, params.draft_id, params.draft);
    },
  });

  defineRoute<{ draft_id: number }>(app, {
    method: 'DELETE',
    url: '/drafts/:draft_id',
    params: { properties: { draft_id: { type: 'integer' } }, required: ['draft_id'] },
    allow: syncEnabled,
    handler: async ({ params, user, meta }) => {
      await deleteDraft(ctx, meta, user.id, params.draft_id);
    },
  });
}
