import { sql, type Kysely } from 'kysely';

// Uploaded files' bytes when FILE_STORAGE is postgres (the default with DATABASE_URL): one row per
// file and its bytes in chunks of at most 256 KiB, so no statement carries a whole file. Not a read
// table: rebuild leaves it alone, like the uploads directory.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stored_files')
    .addColumn('path_id', 'text', (c) => c.primaryKey())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('chunk_size', 'integer', (c) => c.notNull())
    .addColumn('stored_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('stored_file_chunks')
    .addColumn('path_id', 'text', (c) => c.notNull().references('stored_files.path_id').onDelete('cascade'))
    .addColumn('chunk_index', 'integer', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('stored_file_chunks_pkey', ['path_id', 'chunk_index'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stored_file_chunks').execute();
  await db.schema.dropTable('stored_files').execute();
}
