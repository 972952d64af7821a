import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('realms')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('string_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('date_created', 'bigint', (c) => c.notNull())
    .addColumn('properties', 'jsonb', (c) => c.notNull())
    .addColumn('user_settings_defaults', 'jsonb', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('delivery_email', 'text', (c) => c.notNull())
    .addColumn('full_name', 'text', (c) => c.notNull())
    .addColumn('role', 'integer', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull())
    .addColumn('is_bot', 'boolean', (c) => c.notNull())
    .addColumn('bot_type', 'integer')
    .addColumn('bot_owner_id', 'integer')
    .addColumn('is_billing_admin', 'boolean', (c) => c.notNull())
    .addColumn('api_key', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('date_joined', 'text', (c) => c.notNull())
    .addColumn('avatar_source', 'text', (c) => c.notNull())
    .addColumn('avatar_version', 'integer', (c) => c.notNull())
    .addColumn('settings', 'jsonb', (c) => c.notNull())
    .addColumn('profile_data', 'jsonb', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX users_email_idx ON users (realm_id, lower(email))`.execute(db);
  await sql`CREATE UNIQUE INDEX users_delivery_email_idx ON users (realm_id, lower(delivery_email))`.execute(db);
  await db.schema.createIndex('users_api_key_idx').on('users').column('api_key').execute();

  await db.schema
    .createTable('custom_profile_fields')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('type', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hint', 'text', (c) => c.notNull())
    .addColumn('field_data', 'text', (c) => c.notNull())
    .addColumn('order', 'integer', (c) => c.notNull())
    .addColumn('display_in_profile_summary', 'boolean', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('user_groups')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('is_system_group', 'boolean', (c) => c.notNull())
    .addColumn('deactivated', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('creator_id', 'integer')
    .addColumn('date_created', 'bigint')
    .execute();
  await db.schema
    .createTable('user_group_members')
    .addColumn('group_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_group_members_pk', ['group_id', 'user_id'])
    .execute();
  await db.schema.createIndex('user_group_members_user_idx').on('user_group_members').column('user_id').execute();
  await db.schema
    .createTable('user_group_subgroups')
    .addColumn('group_id', 'integer', (c) => c.notNull())
    .addColumn('subgroup_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_group_subgroups_pk', ['group_id', 'subgroup_id'])
    .execute();

  await db.schema
    .createTable('event_queues')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('event_types', 'jsonb')
    .addColumn('narrow', 'jsonb', (c) => c.notNull())
    .addColumn('options', 'jsonb', (c) => c.notNull())
    .addColumn('registered_position', 'bigint', (c) => c.notNull())
    .addColumn('lifespan_secs', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('event_queue_cursors')
    .addColumn('queue_id', 'text', (c) => c.primaryKey())
    .addColumn('acked_id', 'bigint', (c) => c.notNull())
    .addColumn('last_access', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['event_queue_cursors', 'event_queues', 'user_group_subgroups', 'user_group_members',
    'user_groups', 'custom_profile_fields', 'users', 'realms']) {
    await db.schema.dropTable(table).execute();
  }
}
