import type { Kysely } from 'kysely';

// Custom profile fields an administrator marks as required (feature level 244).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('custom_profile_fields').addColumn('required', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('custom_profile_fields').dropColumn('required').execute();
}
