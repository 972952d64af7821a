import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import { systemGroupForRole } from '../domain/roles.js';

/** The latest event of `types` on this event's (user) stream before it. */
async function lastBefore(db: Db, event: StoredEvent, types: string[]): Promise<{ type: string; data: unknown } | undefined> {
  return db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('stream_id', '=', event.stream_id)
    .where('stream_version', '<', event.stream_version)
    .where('type', 'in', types)
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The user's role just before this event of their stream (roles live on the user stream). */
export async function roleBefore(db: Db, event: StoredEvent): Promise<number | undefined> {
  const data = (await lastBefore(db, event, ['UserCreated', 'UserRoleChanged']))?.data as { role?: number } | undefined;
  return data?.role;
}

/** Whether the account was active just before `event` (its last deactivation or reactivation says). */
export async function activeBefore(db: Db, event: StoredEvent): Promise<boolean> {
  return (await lastBefore(db, event, ['UserDeactivated', 'UserReactivated']))?.type !== 'UserDeactivated';
}

/** The realm's system group whose direct members have `role`. */
export async function systemGroupId(db: Db, realmId: number, role: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', true)
    .where('name', '=', systemGroupForRole(role))
    .executeTakeFirst();
  return row?.id;
}
