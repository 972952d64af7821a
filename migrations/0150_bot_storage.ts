import type { Kysely } from 'kysely';

// A user's (in practice a bot's) key-value storage, folded from BotStorageSet/BotStorageRemoved.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('bot_storage')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_storage_pk', ['user_id', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bot_storage').execute();
}
