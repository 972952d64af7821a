import { type Kysely } from 'kysely';

// A subscription is its own event stream (subscription-<stream_id>-<user_id>); its read row carries
// the stream version for optimistic concurrency, like the streams table does.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscriptions').addColumn('version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('subscriptions').dropColumn('version').execute();
}
