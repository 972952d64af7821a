import type { Kysely } from 'kysely';

// Custom emoji of each realm. Deactivated emoji stay (old messages and reactions still show them);
// a name is unique only among the active ones.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('realm_emoji')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('author_id', 'integer')
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('path_id', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('deactivated', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.createIndex('realm_emoji_realm_idx').on('realm_emoji').columns(['realm_id', 'name']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('realm_emoji').execute();
}
