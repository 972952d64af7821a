import type { Kysely } from 'kysely';

// Who may mention a group is a setting of each group (the id of another group); null keeps the
// default, role:nobody for system groups and role:everyone for the others (the projection refolds).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('user_groups').addColumn('can_mention_group', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('user_groups').dropColumn('can_mention_group').execute();
}
