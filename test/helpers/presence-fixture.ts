import { sql } from 'kysely';
import type { TestServer, TestUser } from './server.js';

/** Moves a user's presence (the pings table and the logged state) `seconds` into the past. */
export async function agePresence(s: TestServer, user: TestUser, seconds: number): Promise<void> {
  // The pings this process holds go to the table first, and what it holds is dropped after. A
  // ping answers before its PresenceChanged is folded: the fold must not land after the update.
  await s.platform.presence.tracker.flush();
  await s.platform.waitForProjections(s.platform.commands.answeredPosition);
  for (const table of ['presence_last_seen', 'user_presence'] as const) {
    await s.platform.db
      .updateTable(table)
      .set({
        last_active_time: sql`last_active_time - ${seconds}`,
        last_connected_time: sql`last_connected_time - ${seconds}`,
      })
      .where('user_id', '=', user.id)
      .execute();
  }
  s.platform.presence.tracker.forget(user.id);
  s.platform.presence.snapshots.clear();
}

export async function logLength(s: TestServer): Promise<number> {
  const row = await s.platform.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function presenceEvents(s: TestServer, userId: number): Promise<Array<{ status: string; last_active_time: number | null; last_connected_time: number }>> {
  const rows = await s.platform.db.selectFrom('events').select('data').where('type', '=', 'PresenceChanged').orderBy('position').execute();
  return rows.map((r) => r.data as never).filter((d: { user_id: number }) => d.user_id === userId);
}

export const ping = (s: TestServer, user: TestUser, params: Record<string, unknown> = {}) =>
  s.api('POST', '/users/me/presence', user, { status: 'active', ...params });
