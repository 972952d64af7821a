import type { Db } from '../db/database.js';
import { FULL_MEMBERS_GROUP, fullMembersEvents, waitingPeriodDays, type FullMemberCandidate } from '../domain/user-groups/full-members.js';
import type { StreamAppend } from '../eventstore/types.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';
import { userGroupsStream } from './user-groups.js';

/**
 * The append to the realm's group stream that brings role:fullmembers in line for `users` as the
 * command at hand leaves them (none when nothing changes). It expects the stream's version: every
 * change of the group's membership goes through that stream, so two commands that decided on the
 * same membership conflict, and the loser decides again on the winner's result.
 * `candidates`: as the command decided them, or read from the read tables (then after the version,
 * so that they are at least as new as it).
 */
export async function fullMembersAppends(
  ctx: ServiceContext,
  realmId: number,
  candidates: readonly FullMemberCandidate[] | (() => Promise<readonly FullMemberCandidate[]>),
  now: Date,
  options: {
    /** The threshold to apply, when the command is the one changing it. */
    waitingDays?: number;
    /**
     * A new account's own joining: appended whatever the stream's version, so that signups do not
     * queue behind each other. Nobody else can have added an account that does not exist yet, and
     * anyone deciding on the group meanwhile (the job, a new threshold) expects the version this
     * append moves on, so they decide again with the new account in it.
     */
    newAccount?: boolean;
  } = {},
): Promise<StreamAppend[]> {
  if (Array.isArray(candidates) && candidates.length === 0) return [];
  const streamId = userGroupsStream(realmId);
  // First: it waits for the read tables to include the stream's last event.
  const version = await streamVersion(ctx, streamId);
  const users = typeof candidates === 'function' ? await candidates() : candidates;
  if (users.length === 0) return [];
  const group = await ctx.db
    .selectFrom('user_groups')
    .select('id')
    .where('realm_id', '=', realmId)
    .where('is_system_group', '=', true)
    .where('name', '=', FULL_MEMBERS_GROUP)
    .executeTakeFirst();
  if (!group) return [];
  const days = options.waitingDays ?? (await realmWaitingDays(ctx.db, realmId));
  const members = await ctx.db
    .selectFrom('user_group_members')
    .select('user_id')
    .where('group_id', '=', group.id)
    .where('user_id', 'in', users.map((u) => u.user_id))
    .execute();
  const events = fullMembersEvents(realmId, group.id, users, new Set(members.map((m) => m.user_id)), days, now);
  if (events.length === 0) return [];
  return [{ streamId, expectedVersion: options.newAccount ? undefined : version === 0 ? -1 : version, events }];
}

async function realmWaitingDays(db: Db, realmId: number): Promise<number> {
  const realm = await db.selectFrom('realms').select('properties').where('id', '=', realmId).executeTakeFirst();
  return realm ? waitingPeriodDays(realm.properties) : 0;
}

/** Every account of the organization (the server's own bots belong to no group of it). */
export async function realmMemberCandidates(db: Db, realmId: number): Promise<FullMemberCandidate[]> {
  return db
    .selectFrom('users')
    .select(['id as user_id', 'role', 'is_active', 'date_joined'])
    .where('realm_id', '=', realmId)
    .where('is_system_bot', '=', false)
    .orderBy('id')
    .execute();
}

/**
 * Brings role:fullmembers in line for the whole organization at `meta.now`: members whose waiting
 * period has passed join it (the real server's daily promote_new_full_members), and anyone who no
 * longer belongs leaves. Returns how many joined and left.
 */
export async function syncFullMembers(ctx: ServiceContext, meta: RequestMeta): Promise<{ added: number; removed: number }> {
  const { events } = await ctx.commands.run(metadataOf(meta), async () => ({
    appends: await fullMembersAppends(ctx, meta.realmId, () => realmMemberCandidates(ctx.db, meta.realmId), meta.now),
    result: undefined,
  }));
  let added = 0;
  let removed = 0;
  for (const event of events) {
    const count = (event.data.user_ids as number[] | undefined)?.length ?? 0;
    if (event.type === 'UserGroupMembersAdded') added += count;
    else if (event.type === 'UserGroupMembersRemoved') removed += count;
  }
  return { added, removed };
}
