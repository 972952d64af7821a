import { errors } from '../domain/errors.js';
import {
  decideDefaultStreamGroups,
  defaultStreamGroupNotFound,
  type DefaultStreamGroup,
  type DefaultStreamGroupCommand,
  type NamedChannel,
} from '../domain/realm-admin/default-stream-groups.js';
import type { Db } from '../db/database.js';
import { formatStream, getActiveStreamByName, getSubscription } from '../read/channels.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const defaultStreamGroupsStream = (realmId: number) => `default-stream-groups-${realmId}`;

export async function listDefaultStreamGroupRows(db: Db, realmId: number): Promise<DefaultStreamGroup[]> {
  const rows = await db.selectFrom('default_stream_groups').selectAll().where('realm_id', '=', realmId).execute();
  return rows.map((r) => ({ id: r.id, name: r.name, description: r.description, stream_ids: r.stream_ids }));
}

/** The groups as /register and the default_stream_groups event list them: by name, channels by name. */
export async function formatDefaultStreamGroups(db: Db, groups: readonly DefaultStreamGroup[]): Promise<Array<Record<string, unknown>>> {
  const ids = [...new Set(groups.flatMap((g) => g.stream_ids))];
  const streams = ids.length === 0 ? [] : await db.selectFrom('streams').selectAll().where('id', 'in', ids).where('deactivated', '=', false).execute();
  const byId = new Map(streams.map((s) => [s.id, s]));
  return [...groups]
    // By name in code-point order, as the real server's sorted() orders them.
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((g) => ({
      name: g.name,
      id: g.id,
      description: g.description,
      streams: g.stream_ids
        .flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((s) => {
          const { stream_weekly_traffic: _traffic, ...rest } = formatStream(s, null);
          return rest;
        }),
    }));
}

/** The real server looks the group up before the channels named for it. */
export async function requireDefaultStreamGroup(db: Db, realmId: number, groupId: number): Promise<void> {
  const row = await db.selectFrom('default_stream_groups').select('id').where('realm_id', '=', realmId).where('id', '=', groupId).executeTakeFirst();
  if (!row) throw defaultStreamGroupNotFound(groupId);
}

/** Channels named by an administrator, as the real server's access_stream_by_name resolves them. */
export async function resolveChannelNames(db: Db, user: UserRow, names: readonly string[]): Promise<NamedChannel[]> {
  const out: NamedChannel[] = [];
  for (const name of names) {
    const stream = await getActiveStreamByName(db, user.realm_id, name);
    const visible = stream && (!stream.invite_only || (await getSubscription(db, user.id, stream.id))?.active === true);
    if (!stream || !visible) throw errors.badRequest(`Invalid channel name '${name}'`);
    out.push({ id: stream.id, name: stream.name, is_default: stream.is_default });
  }
  return out;
}

export async function changeDefaultStreamGroups(ctx: ServiceContext, meta: RequestMeta, command: DefaultStreamGroupCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = defaultStreamGroupsStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const groups = await listDefaultStreamGroupRows(ctx.db, meta.realmId);
    const events = decideDefaultStreamGroups(command, meta.realmId, groups);
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}
