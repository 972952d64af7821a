import type { Kysely } from 'kysely';

// Messages moved between channels: who received them, where the new channel's reception spans
// would answer otherwise (see docs/MESSAGE-STATE.md). Rows exist only for moved messages.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('message_moved_receptions')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('received', 'boolean', (c) => c.notNull())
    .addPrimaryKeyConstraint('message_moved_receptions_pk', ['user_id', 'message_id'])
    .execute();
  await db.schema.createIndex('message_moved_receptions_msg_idx').on('message_moved_receptions').column('message_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('message_moved_receptions').execute();
}
