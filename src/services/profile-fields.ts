import { errors } from '../domain/errors.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { changeUserAtOnce } from './users.js';
import type { UserRow } from '../read/users.js';
import type { UserProfileDataChanged } from '../domain/users/events.js';
import { decideReorderProfileFields } from '../domain/profile-fields/decider.js';
import { streamVersion } from './stream-version.js';
import { getRealm } from '../read/realm.js';
import { renderDescription } from './channels.js';
import {
  DEFAULT_EXTERNAL_ACCOUNTS, MAX_SUMMARY_FIELDS, checkFieldDataShape, checkFieldDefinition, checkFieldValue, isDefaultExternalField, isRenderedType,
  storesFieldData,
} from '../domain/profile-fields/rules.js';

/** The realm's fields, for the checks that look at all of them. */
async function realmFields(ctx: ServiceContext, realmId: number) {
  return ctx.db.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realmId).execute();
}

const summaryLimit = () => errors.badRequest(`Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);
const duplicateLabel = () => errors.badRequest('A field with that label already exists.');

/** POST /realm/profile_fields: checked as the real server does, in its order; a known external service names itself. */
export async function createProfileField(
  ctx: ServiceContext,
  meta: RequestMeta,
  input: { name?: string; hint?: string; field_type: number; field_data?: unknown; display_in_profile_summary?: boolean; required?: boolean },
): Promise<number> {
  const type = input.field_type;
  const data = input.field_data === undefined ? {} : checkFieldDataShape(input.field_data);
  const summary = input.display_in_profile_summary ?? false;
  const existing = await realmFields(ctx, meta.realmId);
  if (summary && existing.filter((f) => f.display_in_profile_summary).length >= MAX_SUMMARY_FIELDS) throw summaryLimit();
  let name = (input.name ?? '').trim();
  let hint = input.hint ?? '';
  checkFieldDefinition({ name, hint, type, field_data: data, display_in_profile_summary: summary });
  let field_data = storesFieldData(type) ? JSON.stringify(data) : '';
  if (isDefaultExternalField(type, data)) {
    const service = DEFAULT_EXTERNAL_ACCOUNTS[data.subtype as string]!;
    ({ name, hint } = service);
    field_data = JSON.stringify({ subtype: data.subtype });
  }
  if (existing.some((f) => f.name === name)) throw duplicateLabel();
  const field_id = await ctx.commands.nextId('profile_field_id_seq');
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{
      streamId: fieldStream(field_id),
      expectedVersion: -1,
      events: [{
        type: 'CustomProfileFieldCreated',
        data: {
          // A new field's order is its id, as on the real server: it comes after every field there is.
          field_id, realm_id: meta.realmId, type, name, hint, field_data, order: field_id,
          display_in_profile_summary: summary, required: input.required ?? false,
        },
      }],
    }],
    result: undefined,
  }));
  return field_id;
}

/** How a request sets values: a user's own values are all checked; an administrator's empty value clears. */
export type ProfileDataMode = 'own' | 'admin';

/**
 * The events setting `entries` on `user`'s profile, every entry checked by its field's type; a value
 * that does not change sends nothing.
 */
export async function profileDataEvents(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  entries: ReadonlyArray<{ id: number; value: unknown }>,
  mode: ProfileDataMode = 'own',
): Promise<UserProfileDataChanged[]> {
  if (entries.length === 0) return [];
  if (user.is_bot) throw errors.badRequest('Bots have no profile data');
  const fields = new Map((await realmFields(ctx, meta.realmId)).map((f) => [f.id, f]));
  const users = new Map((await ctx.db.selectFrom('users').select(['id', 'is_active', 'is_bot']).where('realm_id', '=', meta.realmId).execute()).map((u) => [u.id, u]));
  const realm = (await getRealm(ctx.db, meta.realmId))!;
  const current = user.profile_data as Record<string, { value: string } | undefined>;
  const events: UserProfileDataChanged[] = [];
  for (const { id: field_id, value } of entries) {
    const field = fields.get(field_id);
    if (!field) throw errors.badRequest(`Field id ${field_id} not found.`);
    const clears = value === null || (mode === 'admin' && (value === '' || (Array.isArray(value) && value.length === 0)));
    if (clears) {
      if (current[String(field_id)] !== undefined) events.push({ type: 'UserProfileDataChanged', data: { user_id: user.id, field_id, value: null, rendered_value: null } });
      continue;
    }
    const text = checkFieldValue({ name: field.name, type: field.type, field_data: field.field_data }, value, (id) => users.get(id));
    if (current[String(field_id)]?.value === text) continue;
    const rendered_value = isRenderedType(field.type) ? await renderDescription(ctx, text, realm) : null;
    events.push({ type: 'UserProfileDataChanged', data: { user_id: user.id, field_id, value: text, rendered_value } });
  }
  return events;
}

/** Sets several fields of a user's profile at once (all or none). */
export async function setProfileData(ctx: ServiceContext, meta: RequestMeta, userId: number, entries: ReadonlyArray<{ id: number; value: unknown }>): Promise<void> {
  await changeUserAtOnce(ctx, meta, userId, () => [], (user) => profileDataEvents(ctx, meta, user, entries));
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

async function requireField(ctx: ServiceContext, meta: RequestMeta, fieldId: number) {
  const field = await ctx.db.selectFrom('custom_profile_fields').selectAll().where('id', '=', fieldId).executeTakeFirst();
  if (!field || field.realm_id !== meta.realmId) throw errors.badRequest(`Field id ${fieldId} not found.`);
  return field;
}

const fieldStream = (fieldId: number) => `profile-field-${fieldId}`;

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** PATCH /realm/profile_fields/{id}: what the request does not name keeps its value. */
export async function updateProfileField(
  ctx: ServiceContext,
  meta: RequestMeta,
  fieldId: number,
  input: { name?: string; hint?: string; field_data?: unknown; display_in_profile_summary?: boolean; required?: boolean },
): Promise<void> {
  const requestedData = input.field_data === undefined ? undefined : checkFieldDataShape(input.field_data);
  const requestedName = input.name?.trim();
  await ctx.commands.run(metadataOf(meta), async () => {
    const version = await streamVersion(ctx, fieldStream(fieldId));
    const field = await requireField(ctx, meta, fieldId);
    const others = (await realmFields(ctx, meta.realmId)).filter((f) => f.id !== fieldId);
    if (input.display_in_profile_summary && others.filter((f) => f.display_in_profile_summary).length >= MAX_SUMMARY_FIELDS) throw summaryLimit();
    const storedData = (field.field_data === '' ? {} : JSON.parse(field.field_data)) as Record<string, unknown>;
    // A known external service's field keeps its label, hint and data; only its summary display changes.
    const onlySummary = (requestedName === undefined || requestedName === field.name) && (input.hint === undefined || input.hint === field.hint)
      && (requestedData === undefined || sameJson(requestedData, storedData));
    if (isDefaultExternalField(field.type, storedData) && !onlySummary) throw errors.badRequest('Default custom field cannot be updated.');
    const name = requestedName ?? field.name;
    const hint = input.hint ?? field.hint;
    const summary = input.display_in_profile_summary ?? field.display_in_profile_summary;
    checkFieldDefinition({ name, hint, type: field.type, field_data: requestedData ?? storedData, display_in_profile_summary: summary });
    if (name !== field.name && others.some((f) => f.name === name)) throw duplicateLabel();
    const field_data = storesFieldData(field.type) && (requestedData !== undefined || field.field_data === '') ? JSON.stringify(requestedData ?? {}) : field.field_data;
    const data = {
      field_id: fieldId, realm_id: meta.realmId, name, hint, field_data, display_in_profile_summary: summary, required: input.required ?? field.required,
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
