import type { Kysely } from 'kysely';

// Whether the organization is deactivated, folded from RealmDeactivated/RealmReactivated.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('realms').addColumn('deactivated', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('realms').dropColumn('deactivated').execute();
}
