import { sql, type Kysely } from 'kysely';

// Organization exports (POST /export/realm), folded from RealmExportRequested/Finished/Failed/Deleted.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE IF NOT EXISTS realm_export_id_seq`.execute(db);
  await db.schema
    .createTable('realm_exports')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('acting_user_id', 'integer', (c) => c.notNull())
    .addColumn('export_time', 'double precision', (c) => c.notNull())
    .addColumn('path_id', 'text')
    .addColumn('size', 'double precision')
    .addColumn('failed_timestamp', 'double precision')
    .addColumn('deleted_timestamp', 'double precision')
    .execute();
  await db.schema.createIndex('realm_exports_realm_idx').on('realm_exports').columns(['realm_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('realm_exports').execute();
  await sql`DROP SEQUENCE IF EXISTS realm_export_id_seq`.execute(db);
}
