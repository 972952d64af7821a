import type { Kysely } from 'kysely';

// Read by message rendering and flagging; written by the linkifier and alert-word areas.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('linkifiers')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('pattern', 'text', (c) => c.notNull())
    .addColumn('url_template', 'text', (c) => c.notNull())
    .addColumn('order', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('alert_words')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('word', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_words_pk', ['user_id', 'word'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('alert_words').execute();
  await db.schema.dropTable('linkifiers').execute();
}
