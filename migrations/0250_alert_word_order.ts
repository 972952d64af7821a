import type { Kysely } from 'kysely';

// Alert words are listed in the order they were added, as on the real server (the projection refolds).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('alert_words').addColumn('ordinal', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('alert_words').dropColumn('ordinal').execute();
}
