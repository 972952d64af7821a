import { sql, type Kysely } from 'kysely';

// Organization administration read tables: the email domains new users may sign up with, and
// default channel groups (their channels as a JSON list of ids, in the order they were named).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('realm_domains')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('allow_subdomains', 'boolean', (c) => c.notNull())
    .addUniqueConstraint('realm_domains_realm_domain', ['realm_id', 'domain'])
    .execute();
  await db.schema
    .createTable('default_stream_groups')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('stream_ids', 'jsonb', (c) => c.notNull())
    .execute();
  for (const name of ['realm_domain_id_seq', 'default_stream_group_id_seq']) {
    await sql`CREATE SEQUENCE ${sql.id(name)}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('default_stream_groups').execute();
  await db.schema.dropTable('realm_domains').execute();
  for (const name of ['realm_domain_id_seq', 'default_stream_group_id_seq']) {
    await sql`DROP SEQUENCE ${sql.id(name)}`.execute(db);
  }
}
