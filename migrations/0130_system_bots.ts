import type { Kysely } from 'kysely';

// System bots (Notification Bot, Welcome Bot) are managed by the server, not by the organization:
// they are listed in register's cross_realm_bots instead of realm_users, and may post to any channel.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('is_system_bot', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('is_system_bot').execute();
}
