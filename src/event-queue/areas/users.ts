import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { apiEmail, avatarUrlFor, canSeeDeliveryEmail, formatUser, listUsers, type UserRow } from '../../read/users.js';
import { realmHost } from '../../read/realm.js';
import { Role, isAdminRole } from '../../domain/roles.js';
import type { ClientEvent, PreparedEvent, Recipient } from '../types.js';
import type { StoredEvent } from '../../eventstore/types.js';

const viewerOf = (r: Recipient) => ({ user_id: r.user.id, role: r.user.role, realm_id: r.realm.id });

/** realm_user update sent to everyone in the realm who may see that user. */
function personUpdate(person: (r: Recipient) => Record<string, unknown> | null): PreparedEvent {
  return {
    audience: 'realm',
    forUser: (r) => {
      const p = person(r);
      return p ? [{ type: 'realm_user', op: 'update', person: p }] : [];
    },
  };
}

function rowFromCreated(d: DataOf<'UserCreated'>): UserRow {
  return {
    id: d.user_id,
    realm_id: d.realm_id,
    email: d.email,
    delivery_email: d.delivery_email,
    full_name: d.full_name,
    role: d.role,
    is_active: true,
    is_bot: d.is_bot,
    bot_type: d.bot_type,
    bot_owner_id: d.bot_owner_id,
    is_billing_admin: false,
    api_key: '',
    password_hash: null,
    timezone: d.timezone,
    date_joined: d.date_joined,
    avatar_source: 'G',
    avatar_version: 1,
    settings: d.settings,
    profile_data: {},
    version: 1,
  };
}


registerTranslator('UserCreated', async (event) => {
  const d = event.data as DataOf<'UserCreated'>;
  const row = rowFromCreated(d);
  return {
    audience: 'realm',
    forUser: (r) => {
      const person = formatUser(row, viewerOf(r), {
        clientGravatar: r.queue.client_gravatar,
        includeCustomProfileFields: true,
        realmHost: realmHost(r.realm),
        avatarUrlOptional: r.queue.client_capabilities.user_avatar_url_field_optional,
      });
      const events: ClientEvent[] = [{ type: 'realm_user', op: 'add', person }];
      if (row.is_bot && (isAdminRole(r.user.role) || row.bot_owner_id === r.user.id)) {
        events.push({
          type: 'realm_bot',
          op: 'add',
          bot: {
            user_id: row.id, full_name: row.full_name, api_key: row.bot_owner_id === r.user.id ? d.api_key : '',
            email: row.delivery_email, bot_type: row.bot_type, is_active: true, owner_id: row.bot_owner_id,
            default_sending_stream: null, default_events_register_stream: null, default_all_public_streams: false,
            avatar_url: avatarUrlFor(row, true, false), services: [],
          },
        });
      }
      return events;
    },
  };
});

registerTranslator('UserRenamed', async (e) => {
  const d = e.data as DataOf<'UserRenamed'>;
  return personUpdate(() => ({ user_id: d.user_id, full_name: d.full_name }));
});
registerTranslator('UserRoleChanged', async (e) => {
  const d = e.data as DataOf<'UserRoleChanged'>;
  return personUpdate(() => ({ user_id: d.user_id, role: d.role }));
});
registerTranslator('UserBillingAdminChanged', async (e) => {
  const d = e.data as DataOf<'UserBillingAdminChanged'>;
  return personUpdate(() => ({ user_id: d.user_id, is_billing_admin: d.is_billing_admin }));
});
registerTranslator('UserDeactivated', async (e) => {
  const d = e.data as DataOf<'UserDeactivated'>;
  return personUpdate(() => ({ user_id: d.user_id, is_active: false }));
});
registerTranslator('UserReactivated', async (e) => {
  const d = e.data as DataOf<'UserReactivated'>;
  return personUpdate(() => ({ user_id: d.user_id, is_active: true }));
});
registerTranslator('UserBotOwnerChanged', async (e) => {
  const d = e.data as DataOf<'UserBotOwnerChanged'>;
  return personUpdate(() => ({ user_id: d.user_id, bot_owner_id: d.bot_owner_id }));
});
registerTranslator('UserTimezoneChanged', async (e, db) => {
  const d = e.data as DataOf<'UserTimezoneChanged'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  return personUpdate((r) => ({ user_id: d.user_id, email: user ? apiEmail(user, realmHost(r.realm)) : '', timezone: d.timezone }));
});
registerTranslator('UserAvatarChanged', async (e, db) => {
  const d = e.data as DataOf<'UserAvatarChanged'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const row = { ...user, avatar_source: d.avatar_source, avatar_version: d.avatar_version };
  return personUpdate((r) => {
    const url = avatarUrlFor(row, canSeeDeliveryEmail(viewerOf(r), row), false);
    return { user_id: d.user_id, avatar_source: d.avatar_source, avatar_url: url, avatar_url_medium: url, avatar_version: d.avatar_version };
  });
});
registerTranslator('UserEmailChanged', async (e, db) => {
  const d = e.data as DataOf<'UserEmailChanged'>;
  const user = await db.selectFrom('users').selectAll().where('id', '=', d.user_id).executeTakeFirst();
  if (!user) return null;
  const row = { ...user, delivery_email: d.delivery_email };
  return {
    audience: 'realm',
    forUser: (r) => {
      const events: ClientEvent[] = [];
      if (canSeeDeliveryEmail(viewerOf(r), row)) {
        events.push({ type: 'realm_user', op: 'update', person: { user_id: d.user_id, delivery_email: d.delivery_email } });
      }
      if (apiEmail(row, realmHost(r.realm)) === d.delivery_email) {
        events.push({ type: 'realm_user', op: 'update', person: { user_id: d.user_id, new_email: d.delivery_email } });
      }
      return events;
    },
  };
});
registerTranslator('UserProfileDataChanged', async (e) => {
  const d = e.data as DataOf<'UserProfileDataChanged'>;
  const field: Record<string, unknown> = { id: d.field_id, value: d.value };
  if (d.rendered_value !== null) field.rendered_value = d.rendered_value;
  return personUpdate(() => ({ user_id: d.user_id, custom_profile_field: field }));
});

registerSection('realm_user', async ({ trx, user, realm, options }) => {
  const users = await listUsers(trx as never, realm.id);
  const viewer = { user_id: user.id, role: user.role, realm_id: realm.id };
  const fmt = (u: UserRow) => {
    const out = formatUser(u, viewer, {
      clientGravatar: options.client_gravatar,
      includeCustomProfileFields: true,
      realmHost: realmHost(realm),
      avatarUrlOptional: options.client_capabilities.user_avatar_url_field_optional,
    });
    delete out.is_active;
    return out;
  };
  const self = formatUser(user, viewer, { clientGravatar: false, includeCustomProfileFields: false, realmHost: realmHost(realm) });
  return {
    realm_users: users.filter((u) => u.is_active).map(fmt),
    realm_non_active_users: users.filter((u) => !u.is_active).map(fmt),
    cross_realm_bots: [],
    user_id: user.id,
    email: self.email,
    delivery_email: user.delivery_email,
    full_name: user.full_name,
    is_admin: isAdminRole(user.role),
    is_owner: user.role === Role.OWNER,
    is_moderator: user.role === Role.MODERATOR,
    is_guest: user.role === Role.GUEST,
    is_billing_admin: user.is_billing_admin,
    role: user.role,
    avatar_source: user.avatar_source,
    avatar_url: avatarUrlFor(user, true, false),
    avatar_url_medium: avatarUrlFor(user, true, false),
    can_create_streams: user.role !== Role.GUEST,
    can_create_public_streams: user.role !== Role.GUEST,
    can_create_private_streams: user.role !== Role.GUEST,
    can_create_web_public_streams: isAdminRole(user.role),
    can_subscribe_other_users: user.role !== Role.GUEST,
    can_invite_others_to_realm: isAdminRole(user.role),
  };
});

registerSection('custom_profile_fields', async ({ trx, realm }) => {
  const fields = await trx.selectFrom('custom_profile_fields').selectAll().where('realm_id', '=', realm.id).orderBy('order').execute();
  return {
    custom_profile_fields: fields.map((f) => ({
      id: f.id, type: f.type, order: f.order, name: f.name, hint: f.hint, field_data: f.field_data,
      display_in_profile_summary: f.display_in_profile_summary,
    })),
    custom_profile_field_types: CUSTOM_PROFILE_FIELD_TYPES,
  };
});

export const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: 1, name: 'Short text' },
  LONG_TEXT: { id: 2, name: 'Long text' },
  SELECT: { id: 3, name: 'List of options' },
  DATE: { id: 4, name: 'Date picker' },
  URL: { id: 5, name: 'Link' },
  USER: { id: 6, name: 'Person picker' },
  EXTERNAL_ACCOUNT: { id: 7, name: 'External account' },
  PRONOUNS: { id: 8, name: 'Pronouns' },
};
