import { errors } from '../domain/errors.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { changeUserAtOnce } from './users.js';
import type { UserRow } from '../read/users.js';
import type { UserProfileDataChanged } from '../domain/users/events.js';
import { decideReorderProfileFields } from '../domain/profile-fields/decider.js';
import { streamVersion } from './stream-version.js';

const MARKDOWN_TYPES = new Set([2]);

export async function createProfileField(
  ctx: ServiceContext,
  meta: RequestMeta,
  input: { name?: string; hint?: string; field_type: number; field_data?: unknown; display_in_profile_summary?: boolean; required?: boolean },
): Promise<number> {
  const name = (input.name ?? '').trim();
  if (!name && input.field_type !== 8) throw errors.badRequest('Label cannot be blank.');
  const existing = await ctx.db.selectFrom('custom_profile_fields').select(['name', 'order']).where('realm_id', '=', meta.realmId).execute();
  if (existing.some((f) => f.name.toLowerCase() === name.toLowerCase())) throw errors.badRequest('A field with that label already exists.');
  // After a deletion the count no longer gives a free position: take the one after the last.
  const order = Math.max(existing.length, ...existing.map((f) => f.order)) + 1;
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
          order, display_in_profile_summary: input.display_in_profile_summary ?? false, required: input.required ?? false,
        },
      }],
    }],
    result: undefined,
  }));
  return field_id;
}

/** A checked profile value: the text stored for `value` (null clears the field). */
async function profileValue(ctx: ServiceContext, meta: RequestMeta, fieldId: number, value: unknown): Promise<{ text: string | null; type: number }> {
  const field = await ctx.db.selectFrom('custom_profile_fields').select(['realm_id', 'type', 'name', 'field_data']).where('id', '=', fieldId).executeTakeFirst();
  if (!field || field.realm_id !== meta.realmId) throw errors.badRequest(`Field id ${fieldId} not found.`);
  if (value !== null && typeof value !== 'string' && !Array.isArray(value)) throw errors.badRequest(`Invalid value for field ${fieldId}`);
  // An empty value (null, '' or []) clears the field; anything else must suit the field's type.
  if (value === null || value === '' || (Array.isArray(value) && value.length === 0)) return { text: null, type: field.type };
  await checkProfileValue(ctx, meta.realmId, field, value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length > 1000) throw errors.badRequest('Value too long');
  return { text, type: field.type };
}

const PROFILE_TEXT_LIMITS: Record<number, number> = { 1: 50, 2: 500, 7: 50, 8: 50 };

/**
 * The real server's validator for each field type, named by the field's label: texts up to 50
 * characters (long text 500), a YYYY-MM-DD date, an http(s) URL, one of a choice field's keys, or a
 * list of active human users' ids.
 */
async function checkProfileValue(ctx: ServiceContext, realmId: number, field: { type: number; name: string; field_data: string }, value: string | unknown[]): Promise<void> {
  const name = field.name;
  if (field.type === 6) {
    if (!Array.isArray(value)) throw errors.badRequest('User IDs is not a list');
    value.forEach((id, i) => {
      if (typeof id !== 'number' || !Number.isInteger(id)) throw errors.badRequest(`User IDs[${i}] is not an integer`);
    });
    const ids = value as number[];
    const rows = ids.length === 0 ? [] : await ctx.db.selectFrom('users').select(['id', 'is_active', 'is_bot', 'is_system_bot'])
      .where('realm_id', '=', realmId).where('id', 'in', ids.filter((id) => Number.isSafeInteger(id) && Math.abs(id) < 2 ** 31)).execute();
    for (const id of ids) {
      const row = rows.find((r) => r.id === id);
      if (!row || row.is_system_bot) throw errors.badRequest(`Invalid user ID: ${id}`);
      if (!row.is_active) throw errors.badRequest(`User with ID ${id} is deactivated`);
      if (row.is_bot) throw errors.badRequest(`User with ID ${id} is a bot`);
    }
    return;
  }
  if (typeof value !== 'string') throw errors.badRequest(`${name} is not a string`);
  const limit = PROFILE_TEXT_LIMITS[field.type];
  if (limit !== undefined && [...value].length > limit) throw errors.badRequest(`${name} is too long (limit: ${limit} characters)`);
  if (field.type === 3) {
    const choices = field.field_data ? (JSON.parse(field.field_data) as Record<string, unknown>) : {};
    if (!Object.hasOwn(choices, value)) throw errors.badRequest(`'${value}' is not a valid choice for '${name}'.`);
  } else if (field.type === 4) {
    if (!isCalendarDate(value)) throw errors.badRequest(`${name} is not a date`);
  } else if (field.type === 5) {
    if (!isWebUrl(value)) throw errors.badRequest(`${name} is not a URL`);
  }
}

function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isWebUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return ['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol) && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** The events setting `entries` on `user`'s profile, every entry checked. */
export async function profileDataEvents(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  entries: ReadonlyArray<{ id: number; value: unknown }>,
): Promise<UserProfileDataChanged[]> {
  const events: UserProfileDataChanged[] = [];
  for (const { id: field_id, value } of entries) {
    const { text, type } = await profileValue(ctx, meta, field_id, value);
    const rendered_value = text !== null && MARKDOWN_TYPES.has(type) ? `<p>${escapeHtml(text)}</p>` : null;
    events.push({ type: 'UserProfileDataChanged', data: { user_id: user.id, field_id, value: text, rendered_value } });
  }
  if (events.length > 0 && user.is_bot) throw errors.badRequest('Bots have no profile data');
  return events;
}

/** Sets several fields of a user's profile at once (all or none). */
export async function setProfileData(ctx: ServiceContext, meta: RequestMeta, userId: number, entries: ReadonlyArray<{ id: number; value: unknown }>): Promise<void> {
  await changeUserAtOnce(ctx, meta, userId, () => [], (user) => profileDataEvents(ctx, meta, user, entries));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** PATCH /realm/profile_fields: every field's new position, in one event on the realm's field-order stream. */
export async function reorderProfileFields(ctx: ServiceContext, meta: RequestMeta, order: readonly number[]): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const rows = await ctx.db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', meta.realmId).orderBy('order').orderBy('id').execute();
    const fields = rows.map((f) => ({
      id: f.id, type: f.type, order: f.order, name: f.name, hint: f.hint, field_data: f.field_data, display_in_profile_summary: f.display_in_profile_summary,
      required: f.required,
    }));
    const events = decideReorderProfileFields(meta.realmId, order, fields);
    return { appends: [{ streamId: `profile-field-order-${meta.realmId}`, expectedVersion: undefined, events }], result: undefined };
  });
}

/** The real server shows at most this many fields in the user card's profile summary. */
const MAX_SUMMARY_FIELDS = 2;

async function requireField(ctx: ServiceContext, meta: RequestMeta, fieldId: number) {
  const field = await ctx.db.selectFrom('custom_profile_fields').selectAll().where('id', '=', fieldId).executeTakeFirst();
  if (!field || field.realm_id !== meta.realmId) throw errors.badRequest(`Field id ${fieldId} not found.`);
  return field;
}

const fieldStream = (fieldId: number) => `profile-field-${fieldId}`;

/** PATCH /realm/profile_fields/{id}: what the request does not name keeps its value. */
export async function updateProfileField(
  ctx: ServiceContext,
  meta: RequestMeta,
  fieldId: number,
  input: { name?: string; hint?: string; field_data?: unknown; display_in_profile_summary?: boolean; required?: boolean },
): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const version = await streamVersion(ctx, fieldStream(fieldId));
    const field = await requireField(ctx, meta, fieldId);
    const name = input.name === undefined ? field.name : input.name.trim();
    // External-account fields of a known service take their label from the service.
    if (!name && field.type !== 8) throw errors.badRequest('Label cannot be blank.');
    if (name.toLowerCase() !== field.name.toLowerCase()) {
      const others = await ctx.db.selectFrom('custom_profile_fields').select('name').where('realm_id', '=', meta.realmId).where('id', '!=', fieldId).execute();
      if (others.some((f) => f.name.toLowerCase() === name.toLowerCase())) throw errors.badRequest('A field with that label already exists.');
    }
    const summary = input.display_in_profile_summary ?? field.display_in_profile_summary;
    if (summary && !field.display_in_profile_summary) {
      const shown = await ctx.db.selectFrom('custom_profile_fields').select('id').where('realm_id', '=', meta.realmId)
        .where('display_in_profile_summary', '=', true).execute();
      if (shown.length >= MAX_SUMMARY_FIELDS) throw errors.badRequest(`Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);
    }
    const data = {
      field_id: fieldId,
      realm_id: meta.realmId,
      name,
      hint: input.hint ?? field.hint,
      field_data: input.field_data === undefined ? field.field_data : JSON.stringify(input.field_data),
      display_in_profile_summary: summary,
      required: input.required ?? field.required,
    };
    return {
      appends: [{ streamId: fieldStream(fieldId), expectedVersion: version, events: [{ type: 'CustomProfileFieldUpdated' as const, data }] }],
      result: undefined,
    };
  });
}

/** DELETE /realm/profile_fields/{id}: the field and every user's value for it. */
export async function deleteProfileField(ctx: ServiceContext, meta: RequestMeta, fieldId: number): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const version = await streamVersion(ctx, fieldStream(fieldId));
    await requireField(ctx, meta, fieldId);
    return {
      appends: [{
        streamId: fieldStream(fieldId),
        expectedVersion: version,
        events: [{ type: 'CustomProfileFieldDeleted' as const, data: { field_id: fieldId, realm_id: meta.realmId } }],
      }],
      result: undefined,
    };
  });
}
