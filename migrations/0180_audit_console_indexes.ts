import { type Kysely, sql } from 'kysely';

// The audit console finds every event that lists a message (moves, deletions, shredding, flags)
// through data->'message_ids'; without this index a message's life scans those event types whole.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX events_message_ids_idx ON events USING gin ((data->'message_ids') jsonb_path_ops)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX events_message_ids_idx`.execute(db);
}
