import type { Kysely } from 'kysely';

// Reusable invitation links, folded from MultiuseInviteCreated/Revoked. Revoked links stay (the
// real server answers "Invitation has already been revoked" for them). Ids come from invite_id_seq,
// shared with email invitations, so the two kinds never share an id.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('multiuse_invites')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('realm_id', 'integer', (c) => c.notNull())
    .addColumn('invited_by_user_id', 'integer', (c) => c.notNull())
    .addColumn('invited_as', 'integer', (c) => c.notNull())
    .addColumn('stream_ids', 'jsonb', (c) => c.notNull())
    .addColumn('invited', 'bigint', (c) => c.notNull())
    .addColumn('expiry_date', 'bigint')
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('revoked', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.createIndex('multiuse_invites_realm_idx').on('multiuse_invites').columns(['realm_id', 'invited_by_user_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('multiuse_invites').execute();
}
