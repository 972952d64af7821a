import type { Kysely } from 'kysely';

// Presence and user status.
// presence_last_seen: every client's once-a-minute ping, written in place (consumer state like the
//   event-queue cursors; not a projection, rebuild leaves it alone).
// user_presence: the coarse presence the log knows (folded from PresenceChanged and presence_enabled
//   changes), a projection.
// user_status: the status text and emoji (folded from UserStatusChanged), a projection.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('presence_last_seen')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('last_active_time', 'bigint')
    .addColumn('last_connected_time', 'bigint', (c) => c.notNull())
    .addColumn('logged_status', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('presence_last_seen_realm').on('presence_last_seen').column('realm_id').execute();
  await db.schema
    .createTable('user_presence')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('last_active_time', 'bigint')
    .addColumn('last_connected_time', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_presence_realm').on('user_presence').column('realm_id').execute();
  await db.schema
    .createTable('user_status')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('status_text', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('emoji_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('emoji_code', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('reaction_type', 'text', (c) => c.notNull().defaultTo('unicode_emoji'))
    .execute();
  await db.schema.createIndex('user_status_realm').on('user_status').column('realm_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('user_status').execute();
  await db.schema.dropTable('user_presence').execute();
  await db.schema.dropTable('presence_last_seen').execute();
}
