import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import type { StoredEvent } from '../src/eventstore/types.js';
import { defineProjection } from './define.js';
import { SHREDDED } from '../src/eventstore/crypto/envelope.js';
import { Role } from '../src/domain/roles.js';

/**
 * An address sealed under an erased person's key reads as shredded. Rebuilding folds their
 * UserCreated before their UserErased: each such row gets an address of its own meanwhile (the
 * addresses are unique per realm), and UserErased then sets the deleted-user placeholder.
 */
const addressOf = (value: string, userId: number) => (value === SHREDDED ? `deleteduser${userId}@shredded.invalid` : value);

async function update(trx: Trx, event: StoredEvent, userId: number, set: Record<string, unknown>): Promise<void> {
  await trx
    .updateTable('users')
    .set({ ...set, version: event.stream_version })
    .where('id', '=', userId)
    .execute();
}

export const usersProjection = defineProjection({
  name: 'users',
  version: 3,
  tables: ['users', 'custom_profile_fields'],
  handlers: {
    UserCreated: async (trx, d, e) => {
      await trx
        .insertInto('users')
        .values({
          id: d.user_id,
          realm_id: d.realm_id,
          email: addressOf(d.email, d.user_id),
          delivery_email: addressOf(d.delivery_email, d.user_id),
          full_name: d.full_name,
          role: d.role,
          is_active: true,
          is_bot: d.is_bot,
          is_system_bot: d.is_system_bot === true,
          bot_type: d.bot_type,
          bot_owner_id: d.bot_owner_id,
          is_billing_admin: false,
          api_key: d.api_key,
          password_hash: d.password_hash,
          timezone: d.timezone,
          date_joined: d.date_joined,
          avatar_source: 'G',
          avatar_version: 1,
          settings: JSON.stringify(d.settings),
          profile_data: JSON.stringify({}),
          version: e.stream_version,
        })
        .execute();
    },
    UserRenamed: (trx, d, e) => update(trx, e, d.user_id, { full_name: d.full_name }),
    UserRoleChanged: (trx, d, e) => update(trx, e, d.user_id, { role: d.role }),
    UserBillingAdminChanged: (trx, d, e) => update(trx, e, d.user_id, { is_billing_admin: d.is_billing_admin }),
    UserDeactivated: (trx, d, e) => update(trx, e, d.user_id, { is_active: false }),
    UserReactivated: (trx, d, e) => update(trx, e, d.user_id, { is_active: true }),
    UserApiKeyRegenerated: (trx, d, e) => update(trx, e, d.user_id, { api_key: d.api_key }),
    UserPasswordChanged: (trx, d, e) => update(trx, e, d.user_id, { password_hash: d.password_hash }),
    UserTimezoneChanged: (trx, d, e) => update(trx, e, d.user_id, { timezone: d.timezone }),
    UserEmailChanged: (trx, d, e) =>
      update(trx, e, d.user_id, { email: addressOf(d.email, d.user_id), delivery_email: addressOf(d.delivery_email, d.user_id) }),
    // As the real server's deleted user: a placeholder name and address, deactivated, a member,
    // nothing personal left (profile values, timezone, an uploaded avatar).
    UserErased: (trx, d, e) =>
      update(trx, e, d.user_id, {
        full_name: d.full_name,
        email: d.email,
        delivery_email: d.email,
        is_active: false,
        role: Role.MEMBER,
        timezone: '',
        avatar_source: 'G',
        avatar_version: d.avatar_version,
        profile_data: JSON.stringify({}),
      }),
    UserBotOwnerChanged: (trx, d, e) => update(trx, e, d.user_id, { bot_owner_id: d.bot_owner_id }),
    UserAvatarChanged: (trx, d, e) =>
      update(trx, e, d.user_id, { avatar_source: d.avatar_source, avatar_version: d.avatar_version }),
    BotDefaultChanged: (trx, d, e) =>
      update(trx, e, d.user_id, {
        [d.property === 'default_all_public_streams' ? d.property : `${d.property}_id`]: d.value,
      }),
    // The service lives in bot_services; the bot's row follows its stream's version (commands on the user check it).
    BotServiceUpdated: (trx, d, e) => update(trx, e, d.user_id, {}),
    UserProfileDataChanged: async (trx, d, e) => {
      const key = String(d.field_id);
      const value = d.value === null ? sql`profile_data - ${key}` : sql`profile_data || ${JSON.stringify({
        [key]: d.rendered_value === null ? { value: d.value } : { value: d.value, rendered_value: d.rendered_value },
      })}::jsonb`;
      await trx
        .updateTable('users')
        .set({ profile_data: value as never, version: e.stream_version })
        .where('id', '=', d.user_id)
        .execute();
    },
    UserSettingsChanged: async (trx, d, e) => {
      await trx
        .updateTable('users')
        .set({ settings: sql`settings || ${JSON.stringify(d.changes)}::jsonb` as never, version: e.stream_version })
        .where('id', '=', d.user_id)
        .execute();
    },
    CustomProfileFieldsReordered: async (trx, d) => {
      for (const f of d.fields) await trx.updateTable('custom_profile_fields').set({ order: f.order }).where('id', '=', f.id).execute();
    },
    CustomProfileFieldUpdated: async (trx, d) => {
      await trx
        .updateTable('custom_profile_fields')
        .set({ name: d.name, hint: d.hint, field_data: d.field_data, display_in_profile_summary: d.display_in_profile_summary, required: d.required ?? false })
        .where('id', '=', d.field_id)
        .execute();
      // A choice that is no longer offered is no longer anyone's value (no event tells the users, as on the real server).
      const field = await trx.selectFrom('custom_profile_fields').select('type').where('id', '=', d.field_id).executeTakeFirst();
      if (field?.type !== 3 || d.field_data === '') return;
      const key = String(d.field_id);
      const choices = Object.keys(JSON.parse(d.field_data) as Record<string, unknown>);
      await trx
        .updateTable('users')
        .set({ profile_data: sql`profile_data - ${key}` as never })
        .where('realm_id', '=', d.realm_id)
        .where(sql<boolean>`profile_data ? ${key}`)
        .$if(choices.length > 0, (q) => q.where(sql<boolean>`NOT (profile_data -> ${key} ->> 'value' = ANY(${choices}::text[]))`))
        .execute();
    },
    CustomProfileFieldDeleted: async (trx, d) => {
      await trx.deleteFrom('custom_profile_fields').where('id', '=', d.field_id).execute();
      // The field's values go with it; the users' own stream versions are not theirs to change.
      const key = String(d.field_id);
      await trx
        .updateTable('users')
        .set({ profile_data: sql`profile_data - ${key}` as never })
        .where('realm_id', '=', d.realm_id)
        .where(sql<boolean>`profile_data ? ${key}`)
        .execute();
    },
    CustomProfileFieldCreated: async (trx, d) => {
      await trx
        .insertInto('custom_profile_fields')
        .values({
          id: d.field_id,
          realm_id: d.realm_id,
          type: d.type,
          name: d.name,
          hint: d.hint,
          field_data: d.field_data,
          order: d.order,
          display_in_profile_summary: d.display_in_profile_summary,
          required: d.required ?? false,
        })
        .execute();
    },
  },
});
