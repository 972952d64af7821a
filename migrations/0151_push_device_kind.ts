import type { Kysely } from 'kysely';

// Which service a push token belongs to when it came through /users/me/apns_device_token or
// /users/me/android_gcm_reg_id; null for tokens from /users/me/push_device_token (and for every row
// folded before this column existed, which is what their events say).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('push_devices').addColumn('kind', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('push_devices').dropColumn('kind').execute();
}
