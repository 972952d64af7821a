import { errors } from '../domain/errors.js';
import { DEFAULT_REALM_PROPERTIES } from '../domain/realm/defaults.js';
import { decideRealmSettings, type RealmSettingsState } from '../domain/realm-admin/settings.js';
import type { Db } from '../db/database.js';
import { getRealm } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { realmStream } from './bootstrap.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';
import { fullMembersAppends, realmMemberCandidates } from './full-members.js';
import { waitingPeriodDays } from '../domain/user-groups/full-members.js';

/** The decider's view of the organization: current values with defaults, group settings as ids. */
export async function realmSettingsState(db: Db, realmId: number): Promise<RealmSettingsState> {
  const realm = await getRealm(db, realmId);
  if (!realm) throw errors.badRequest('Invalid organization');
  const groups = await db
    .selectFrom('user_groups')
    .select(['id', 'name'])
    .where('realm_id', '=', realmId)
    .select('is_system_group')
    .execute();
  const system = groups.filter((g) => g.is_system_group);
  const idOf = new Map(system.map((g) => [g.name, g.id]));
  const properties: Record<string, unknown> = { ...DEFAULT_REALM_PROPERTIES, ...(realm.properties as Record<string, unknown>) };
  // A group setting left at its default names a system group; compare by id like the API does.
  for (const key of ['create_multiuse_invite_group', 'can_access_all_users_group']) {
    if (typeof properties[key] === 'string') properties[key] = idOf.get(properties[key] as string) ?? null;
  }
  const channels = await db.selectFrom('streams').select('id').where('realm_id', '=', realmId).where('deactivated', '=', false).execute();
  return {
    realm_id: realmId,
    name: realm.name,
    properties,
    system_groups: new Map(system.map((g) => [g.id, g.name])),
    other_group_ids: new Set(groups.filter((g) => !g.is_system_group).map((g) => g.id)),
    channel_ids: new Set(channels.map((c) => c.id)),
  };
}

/** PATCH /realm: returns what changed, as the real server's answer lists it. */
export async function updateRealmSettings(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  settings: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = realmStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const state = await realmSettingsState(ctx.db, meta.realmId);
    const { events, changed } = decideRealmSettings({ type: 'UpdateRealmSettings', actor_role: user.role, settings }, state);
    if (events.length === 0) return { appends: [], result: changed };
    // A new waiting period moves members into or out of role:fullmembers at once, after the setting.
    const waiting = events.find((event) => event.data.property === 'waiting_period_threshold');
    const fullMembers = waiting
      ? await fullMembersAppends(ctx, meta.realmId, () => realmMemberCandidates(ctx.db, meta.realmId), meta.now, {
        waitingDays: waitingPeriodDays({ waiting_period_threshold: waiting.data.value }),
      })
      : [];
    return { appends: [{ streamId, expectedVersion: version, events }, ...fullMembers], result: changed };
  });
  return result;
}
