import { DEFAULT_REALM_PROPERTIES } from '../domain/realm/defaults.js';
import { decideRealmDomains, type RealmDomain, type RealmDomainCommand } from '../domain/realm-admin/domains.js';
import type { Db } from '../db/database.js';
import type { StreamAppend } from '../eventstore/types.js';
import { getRealm } from '../read/realm.js';
import { realmStream } from './bootstrap.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const realmDomainsStream = (realmId: number) => `realm-domains-${realmId}`;

/** The organization's allowed email domains, as GET /realm/domains and /register list them: in the order they were added. */
export async function listRealmDomains(db: Db, realmId: number): Promise<RealmDomain[]> {
  return db
    .selectFrom('realm_domains')
    .select(['domain', 'allow_subdomains'])
    .where('realm_id', '=', realmId)
    .orderBy('id')
    .execute();
}

async function changeRealmDomains(ctx: ServiceContext, meta: RequestMeta, command: RealmDomainCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const domainsVersion = await streamVersion(ctx, realmDomainsStream(meta.realmId));
    const realmVersion = await streamVersion(ctx, realmStream(meta.realmId));
    const realm = await getRealm(ctx.db, meta.realmId);
    const properties: Record<string, unknown> = { ...DEFAULT_REALM_PROPERTIES, ...(realm?.properties as Record<string, unknown> | undefined) };
    const events = decideRealmDomains(command, {
      realm_id: meta.realmId,
      domains: await listRealmDomains(ctx.db, meta.realmId),
      emails_restricted_to_domains: properties.emails_restricted_to_domains === true,
    });
    // A setting the removal changes belongs to the realm's own stream.
    const settings = events.filter((e) => e.type === 'RealmSettingChanged');
    const appends: StreamAppend[] = [];
    if (settings.length > 0) appends.push({ streamId: realmStream(meta.realmId), expectedVersion: realmVersion, events: settings });
    appends.push({
      streamId: realmDomainsStream(meta.realmId),
      expectedVersion: domainsVersion === 0 ? -1 : domainsVersion,
      events: events.filter((e) => e.type !== 'RealmSettingChanged'),
    });
    return { appends, result: undefined };
  });
}

/** POST /realm/domains: the new domain's id and name, as the real server answers. */
export async function addRealmDomain(ctx: ServiceContext, meta: RequestMeta, domain: string, allowSubdomains: boolean): Promise<[number, string]> {
  const normalized = domain.trim().toLowerCase();
  const domainId = await ctx.commands.nextId('realm_domain_id_seq');
  await changeRealmDomains(ctx, meta, { type: 'AddRealmDomain', domain_id: domainId, domain: normalized, allow_subdomains: allowSubdomains });
  return [domainId, normalized];
}

export async function changeRealmDomain(ctx: ServiceContext, meta: RequestMeta, domain: string, allowSubdomains: boolean): Promise<void> {
  await changeRealmDomains(ctx, meta, { type: 'ChangeRealmDomain', domain, allow_subdomains: allowSubdomains });
}

export async function removeRealmDomain(ctx: ServiceContext, meta: RequestMeta, domain: string): Promise<void> {
  await changeRealmDomains(ctx, meta, { type: 'RemoveRealmDomain', domain });
}
