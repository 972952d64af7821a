import { errors } from '../domain/errors.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { requireUser, userStream } from './users.js';

const MARKDOWN_TYPES = new Set([2]);

export async function createProfileField(
  ctx: ServiceContext,
  meta: RequestMeta,
  input: { name?: string; hint?: string; field_type: number; field_data?: unknown; display_in_profile_summary?: boolean },
): Promise<number> {
  const name = (input.name ?? '').trim();
  if (!name && input.field_type !== 8) throw errors.badRequest('Label cannot be blank.');
  const existing = await ctx.db.selectFrom('custom_profile_fields').select(['name', 'order']).where('realm_id', '=', meta.realmId).execute();
  if (existing.some((f) => f.name.toLowerCase() === name.toLowerCase())) throw errors.badRequest('A field with that label already exists.');
  const field_id = await ctx.commands.nextId('profile_field_id_seq');
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{
      streamId: `profile-field-${field_id}`,
      expectedVersion: -1,
      events: [{
        type: 'CustomProfileFieldCreated',
        data: {
          field_id, realm_id: meta.realmId, type: input.field_type, name, hint: input.hint ?? '',
          field_data: input.field_data === undefined ? '' : JSON.stringify(input.field_data),
          order: existing.length + 1, display_in_profile_summary: input.display_in_profile_summary ?? false,
        },
      }],
    }],
    result: undefined,
  }));
  return field_id;
}

/** The checks setProfileData makes before writing: a caller changing several things runs them all first. */
export async function checkProfileData(ctx: ServiceContext, meta: RequestMeta, fieldId: number, value: unknown): Promise<void> {
  const field = await ctx.db.selectFrom('custom_profile_fields').select('realm_id').where('id', '=', fieldId).executeTakeFirst();
  if (!field || field.realm_id !== meta.realmId) throw errors.badRequest(`Field id ${fieldId} not found.`);
  if (value !== null && typeof value !== 'string' && !Array.isArray(value)) throw errors.badRequest(`Invalid value for field ${fieldId}`);
  const text = value === null || value === '' ? null : typeof value === 'string' ? value : JSON.stringify(value);
  if (text !== null && text.length > 1000) throw errors.badRequest('Value too long');
}

export async function setProfileData(ctx: ServiceContext, meta: RequestMeta, userId: number, fieldId: number, value: unknown): Promise<void> {
  const field = await ctx.db.selectFrom('custom_profile_fields').selectAll().where('id', '=', fieldId).executeTakeFirst();
  if (!field || field.realm_id !== meta.realmId) throw errors.badRequest(`Field id ${fieldId} not found.`);
  if (value !== null && typeof value !== 'string' && !Array.isArray(value)) throw errors.badRequest(`Invalid value for field ${fieldId}`);
  const text = value === null || value === '' ? null : typeof value === 'string' ? value : JSON.stringify(value);
  if (text !== null && text.length > 1000) throw errors.badRequest('Value too long');
  await ctx.commands.run(metadataOf(meta), async () => {
    const user = await requireUser(ctx.db, userId, meta.realmId);
    if (user.is_bot) throw errors.badRequest('Bots have no profile data');
    return {
      appends: [{
        streamId: userStream(userId),
        expectedVersion: user.version,
        events: [{
          type: 'UserProfileDataChanged',
          data: { user_id: userId, field_id: fieldId, value: text, rendered_value: text !== null && MARKDOWN_TYPES.has(field.type) ? `<p>${escapeHtml(text)}</p>` : null },
        }],
      }],
      result: undefined,
    };
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
