import type { Kysely } from 'kysely';

// Each user's tutorial status, folded from TutorialStatusChanged; no row: the tutorial is waiting.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tutorial_status')
    .addColumn('user_id', 'integer', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tutorial_status').execute();
}
