import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { DEFAULT_REALM_PROPERTIES } from '../domain/realm/defaults.js';
import { DEFAULT_USER_SETTINGS } from '../domain/settings/defaults.js';
import { Role, SYSTEM_GROUPS } from '../domain/roles.js';
import type { NewEvent } from '../eventstore/types.js';
import { getDefaultRealm } from '../read/realm.js';
import { createUser } from './users.js';
import { metadataOf, type ServiceContext } from './context.js';
import { completeOrganization } from './organization-setup.js';

export const realmStream = (realmId: number) => `realm-${realmId}`;

export interface BootstrapResult {
  realmId: number;
  created: boolean;
  owner?: { email: string; apiKey: string; zuliprcPath?: string };
}

/**
 * 'full': the organization as the real server creates it (system bots, channels, welcome messages),
 * completed on every start of an organization created this way; 'empty': only the realm, its system
 * groups and the owner (tests of other areas start from there).
 */
export type OrganizationSetup = 'full' | 'empty';

export async function ensureOrganization(
  ctx: ServiceContext,
  options: { writeZuliprc: boolean; setup?: OrganizationSetup },
): Promise<BootstrapResult> {
  const result = await ensureRealmAndOwner(ctx, options);
  if (options.setup === 'full' && (await createdForFullSetup(ctx, result.realmId))) await completeOrganization(ctx, result.realmId);
  return result;
}

async function createdForFullSetup(ctx: ServiceContext, realmId: number): Promise<boolean> {
  const created = await ctx.db
    .selectFrom('events')
    .select('data')
    .where('stream_id', '=', realmStream(realmId))
    .where('type', '=', 'RealmCreated')
    .executeTakeFirst();
  return created?.data.full_setup === true;
}

/**
 * On an empty database: creates the organization, its system groups and the owner account.
 * The realm stream must not exist yet, so two processes starting together create it once.
 */
async function ensureRealmAndOwner(ctx: ServiceContext, options: { writeZuliprc: boolean; setup?: OrganizationSetup }): Promise<BootstrapResult> {
  const existing = await getDefaultRealm(ctx.db);
  if (existing) return { realmId: existing.id, created: false };
  const realmId = 1;
  const now = new Date();
  const meta = { actorId: null, realmId, client: 'bootstrap', requestId: randomUUID(), now };
  const date_created = Math.floor(now.getTime() / 1000);
  const events: NewEvent[] = [{
    type: 'RealmCreated',
    data: {
      realm_id: realmId,
      string_id: '',
      name: ctx.config.realmName,
      url: ctx.config.externalUrl,
      date_created,
      properties: { ...DEFAULT_REALM_PROPERTIES },
      user_settings_defaults: { ...DEFAULT_USER_SETTINGS },
      ...(options.setup === 'full' ? { full_setup: true } : {}),
    },
  }];
  const groupIds: number[] = [];
  for (const _ of SYSTEM_GROUPS) groupIds.push(await ctx.commands.nextId('user_group_id_seq'));
  SYSTEM_GROUPS.forEach((group, i) => {
    // Each wider group contains the next narrower one: owners ⊂ administrators ⊂ … ⊂ internet.
    const subgroups = i > 0 && i < SYSTEM_GROUPS.length - 1 ? [groupIds[i - 1]!] : [];
    events.push({
      type: 'UserGroupCreated',
      data: {
        group_id: groupIds[i]!,
        realm_id: realmId,
        name: group.name,
        description: group.description,
        is_system_group: true,
        members: [],
        subgroups,
        creator_id: null,
        date_created,
      },
    });
  });
  // Another process may be creating it at the same moment: then the stream exists on retry.
  const { result: createdHere } = await ctx.commands.run(metadataOf(meta), async () => {
    if (await getDefaultRealm(ctx.db)) return { appends: [], result: false };
    return { appends: [{ streamId: realmStream(realmId), expectedVersion: -1, events }], result: true };
  });
  if (!createdHere) return { realmId, created: false };
  const owner = await createUser(ctx, meta, { email: ctx.config.ownerEmail, full_name: 'Owner', role: Role.OWNER });
  const result: BootstrapResult = { realmId, created: true, owner: { email: ctx.config.ownerEmail, apiKey: owner.api_key } };
  if (options.writeZuliprc) {
    result.owner!.zuliprcPath = writeZuliprc(ctx.config.dataDir, 'zuliprc', ctx.config.ownerEmail, owner.api_key, ctx.config.externalUrl);
  }
  return result;
}

export function writeZuliprc(dir: string, name: string, email: string, key: string, site: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  writeFileSync(file, `[api]\nemail=${email}\nkey=${key}\nsite=${site}\n`, { mode: 0o600 });
  return file;
}
