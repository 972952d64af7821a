import type { Kysely } from 'kysely';

// A bot's defaults: the channel it sends to and registers for when a request names none, and
// whether it registers for every public channel.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('default_sending_stream_id', 'integer')
    .addColumn('default_events_register_stream_id', 'integer')
    .addColumn('default_all_public_streams', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('users')
    .dropColumn('default_sending_stream_id')
    .dropColumn('default_events_register_stream_id')
    .dropColumn('default_all_public_streams')
    .execute();
}
