import type { Kysely } from 'kysely';

// An animated custom emoji also has a still image (its first frame, as PNG), served as still_url.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('realm_emoji').addColumn('still_path_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('realm_emoji').dropColumn('still_path_id').execute();
}
