import { type Kysely, sql } from 'kysely';

// Two indexes for the audit console (docs/AUDIT-CONSOLE.md):
// - every event that lists a message (moves, deletions, shredding, flags) through data->'message_ids':
//   without it a message's life, or the log filtered by a message, scans those event types whole;
// - metadata->>'time' as text: the application writes it with toISOString() (UTC, fixed width), so
//   text order is time order, and a time range of the log, or a moment for time travel, is an index range
//   (with the position beside it, the first position after a moment is read from the index alone).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX events_message_ids_idx ON events USING gin ((data->'message_ids') jsonb_path_ops)`.execute(db);
  await sql`CREATE INDEX events_time_idx ON events ((metadata->>'time'), position)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX events_time_idx`.execute(db);
  await sql`DROP INDEX events_message_ids_idx`.execute(db);
}
