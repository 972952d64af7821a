import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { GroupState } from '../domain/user-groups/decider.js';

export interface UserGroupApi {
  id: number;
  name: string;
  description: string;
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group: boolean;
  can_mention_group: number;
}

export type LoadedGroup = GroupState & {
  members: number[];
  direct_subgroup_ids: number[];
  description: string;
  can_mention_group: number;
  creator_id: number | null;
  date_created: number | null;
  deactivated: boolean;
};

/** Every group of the realm with its direct members and subgroups, by id. */
export async function loadGroups(db: Db, realmId: number): Promise<LoadedGroup[]> {
  const groups = await db.selectFrom('user_groups').selectAll().where('realm_id', '=', realmId).orderBy('id').execute();
  if (groups.length === 0) return [];
  const ids = groups.map((g) => g.id);
  const members = await db.selectFrom('user_group_members').selectAll().where('group_id', 'in', ids).orderBy('user_id').execute();
  const subgroups = await db.selectFrom('user_group_subgroups').selectAll().where('group_id', 'in', ids).orderBy('subgroup_id').execute();
  const system = {
    nobody: groups.find((g) => g.is_system_group && g.name === 'role:nobody')?.id,
    everyone: groups.find((g) => g.is_system_group && g.name === 'role:everyone')?.id,
  };
  return groups.map((g) => ({
    id: g.id,
    name: g.name,
    description: g.description,
    is_system_group: g.is_system_group,
    creator_id: g.creator_id,
    date_created: g.date_created === null ? null : Number(g.date_created),
    deactivated: g.deactivated,
    can_mention_group: g.can_mention_group ?? canMentionGroupId(g.is_system_group, system, g.id),
    members: members.filter((m) => m.group_id === g.id).map((m) => m.user_id),
    direct_subgroup_ids: subgroups.filter((s) => s.group_id === g.id).map((s) => s.subgroup_id),
  }));
}

/** The default of the group-mention setting: system groups may not be mentioned, others by everyone. */
export function canMentionGroupId(isSystemGroup: boolean, systemIds: { nobody?: number; everyone?: number }, fallback: number): number {
  return (isSystemGroup ? systemIds.nobody : systemIds.everyone) ?? fallback;
}

export async function systemGroupIds(db: Db, realmId: number): Promise<{ nobody?: number; everyone?: number }> {
  const rows = await db
    .selectFrom('user_groups')
    .select(['id', 'name'])
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', true)
    .where('name', 'in', ['role:nobody', 'role:everyone'])
    .execute();
  return { nobody: rows.find((r) => r.name === 'role:nobody')?.id, everyone: rows.find((r) => r.name === 'role:everyone')?.id };
}

/**
 * The client form of every group (GET /user_groups and /register's realm_user_groups). The read
 * table also keeps creator_id, date_created and deactivated, which groups only carry in the API
 * from feature levels 290-292, above the level this server claims. As on the real server, a
 * deactivated account keeps its memberships but is listed in no group until it is reactivated
 * (clients drop it on realm_user update is_active false and get add_members back).
 */
export async function listUserGroups(db: Db, realmId: number): Promise<UserGroupApi[]> {
  const groups = await loadGroups(db, realmId);
  const inactive = new Set(
    (await db.selectFrom('users').select('id').where('realm_id', '=', realmId).where('is_active', '=', false).execute()).map((u) => u.id),
  );
  return groups.map((g) => ({
    id: g.id,
    name: g.name,
    description: g.description,
    members: inactive.size === 0 ? g.members : g.members.filter((id) => !inactive.has(id)),
    direct_subgroup_ids: g.direct_subgroup_ids,
    is_system_group: g.is_system_group,
    can_mention_group: g.can_mention_group,
  }));
}

/** Users in the group directly or through any depth of subgroups. */
export async function recursiveMembers(db: Db, groupId: number): Promise<number[]> {
  const { rows } = await sql<{ user_id: number }>`
    WITH RECURSIVE g(id) AS (
      SELECT ${groupId}::int
      UNION SELECT s.subgroup_id FROM user_group_subgroups s JOIN g ON s.group_id = g.id
    )
    SELECT DISTINCT m.user_id FROM user_group_members m JOIN g ON m.group_id = g.id ORDER BY m.user_id`.execute(db);
  return rows.map((r) => Number(r.user_id));
}

/** Subgroups at any depth (excluding the group itself). */
export async function recursiveSubgroups(db: Db, groupId: number): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    WITH RECURSIVE g(id) AS (
      SELECT s.subgroup_id FROM user_group_subgroups s WHERE s.group_id = ${groupId}::int
      UNION SELECT s.subgroup_id FROM user_group_subgroups s JOIN g ON s.group_id = g.id
    )
    SELECT id FROM g ORDER BY id`.execute(db);
  return rows.map((r) => Number(r.id));
}
