import { sql, type Kysely } from 'kysely';

// One row naming this log, made once when the database is created. Everything the log sends
// outside the database (the JetStream stream, wake-up subjects) carries it, so two deployments
// that share one NATS server can never mix their streams or wake each other's workers.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('log_identity')
    .addColumn('log_id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`INSERT INTO log_identity DEFAULT VALUES`.execute(db);
  await sql`
    CREATE FUNCTION log_identity_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the log identity never changes (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER log_identity_fixed BEFORE INSERT OR UPDATE OR DELETE ON log_identity
    FOR EACH ROW EXECUTE FUNCTION log_identity_fixed()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('log_identity').execute();
  await sql`DROP FUNCTION log_identity_fixed`.execute(db);
}
